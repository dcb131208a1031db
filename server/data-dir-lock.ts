import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The file that says which process serves a data directory. */
export const serverPidFile = (dataDir: string) => join(dataDir, "server.pid");

export interface DataDirLock {
  /** The previous server of the directory ended without releasing it (killed, crashed, power cut). */
  previousServerDied: boolean;
  release(): void;
}

/**
 * The pid of the live process serving the data directory, if any. A pid file
 * whose process is gone is what a killed server leaves: nobody holds the directory.
 */
export function dataDirHolder(dataDir: string): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(serverPidFile(dataDir), "utf8").trim());
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === "EPERM" ? pid : undefined;
  }
}

/**
 * Makes this process the only server of the data directory: SQLite is one
 * process's database here, and being the only one is what lets the job runner
 * take back, at once, the jobs a killed server left running. Throws when a live
 * server holds the directory.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const file = serverPidFile(dataDir);
  const own = String(process.pid);
  const holder = dataDirHolder(dataDir);
  if (holder !== undefined && holder !== process.pid) {
    throw new Error(`another reachkit server (pid ${holder}) serves ${dataDir}; stop it first (or delete ${file} if that process is not reachkit)`);
  }
  let previousServerDied = false;
  try {
    writeFileSync(file, own, { flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    previousServerDied = holder === undefined;
    writeFileSync(file, own);
  }
  return {
    previousServerDied,
    release() {
      try {
        if (readFileSync(file, "utf8").trim() === own) rmSync(file);
      } catch {
        // already gone
      }
    },
  };
}
