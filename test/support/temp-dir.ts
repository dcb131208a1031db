import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made: string[] = [];
// Each test file (and each bench) runs in a process of its own: its directories go when it exits, passed or failed.
process.on("exit", () => {
  for (const directory of made) {
    try {
      rmSync(directory, { recursive: true, force: true });
    } catch {
      // A directory left behind (a file still held open, on some systems) must not fail the run.
    }
  }
});

/** A new, empty directory under the system's temporary directory, removed when the process exits. */
export function temporaryDirectory(name: string): string {
  const directory = mkdtempSync(join(tmpdir(), `reachkit-${name}-`));
  made.push(directory);
  return directory;
}
