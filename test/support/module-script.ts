import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * Runs `source` as an ES module in a node process of its own, with the project's TypeScript loaded through tsx,
 * after `flags` (node's own, or more `--import`s): for what only a fresh process shows (its start, its exit,
 * its flags). Answers when the process has ended.
 */
export function runModuleScript(source: string, flags: readonly string[] = []): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [...flags, "--import", "tsx", "--input-type=module", "-e", source], { encoding: "utf8" });
}

/** A project file (a path from the repository's root) as a quoted module specifier, for an `import` in such a script. */
export function projectModule(path: string): string {
  return JSON.stringify(pathToFileURL(join(import.meta.dirname, "../..", path)).href);
}
