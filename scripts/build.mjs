// `npm run build` (and `prepare`, so `npm pack` and installs from git run it): the package's
// JavaScript and declaration files in dist/, from the TypeScript sources, plus the files that
// are not TypeScript (the SQLite checkpoint worker). tsc writes into a staging folder that
// replaces dist/ only once the build succeeded, so a failed build leaves the last good one.
import { execFileSync } from "node:child_process";
import { cpSync, readdirSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const SOURCE_FOLDERS = ["src", "adapters", "plugins", "server"];
const root = join(import.meta.dirname, "..");
const dist = join(root, "dist");
const staging = join(root, `dist.building-${process.pid}`);

try {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json"), "--outDir", staging], { stdio: "inherit" });
  for (const folder of SOURCE_FOLDERS) {
    for (const file of readdirSync(join(root, folder), { recursive: true, withFileTypes: true })) {
      if (!file.isFile() || file.name.endsWith(".ts")) continue;
      const path = join(file.parentPath, file.name);
      cpSync(path, join(staging, path.slice(root.length)));
    }
  }
  rmSync(dist, { recursive: true, force: true });
  renameSync(staging, dist);
} catch (error) {
  rmSync(staging, { recursive: true, force: true });
  process.exitCode = 1;
  if (!error.status) console.error(error);
}
