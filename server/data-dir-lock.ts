import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";

/** The file that tells operators which process serves a data directory (information only: the lock decides). */
export const serverPidFile = (dataDir: string) => join(dataDir, "server.pid");

/** The empty SQLite file whose OS lock the process serving the data directory holds. */
export const serverLockFile = (dataDir: string) => join(dataDir, "server.lock");

/** Another live reachkit process holds the data directory. */
export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    /** The holder's pid as its pid file names it, when it does. */
    readonly pid: number | undefined,
  ) {
    super(`another reachkit server${pid === undefined ? "" : ` (pid ${pid})`} serves ${dataDir}; stop it first`);
    this.name = "DataDirInUseError";
  }
}

export interface DataDirLock {
  /** The previous server of the directory ended without releasing it (killed, crashed, power cut). */
  previousServerDied: boolean;
  release(): void;
}

export interface LockDataDirOptions {
  /** Write `server.pid` while the lock is held (the server does; a restore holds the directory without it). Default true. */
  writePid?: boolean;
}

/**
 * Makes this process the only server of the data directory: SQLite is one
 * process's database here, and being the only one is what lets the job runner
 * take back, at once, the jobs a killed server left running.
 *
 * The holder keeps an exclusive SQLite write transaction open on
 * `server.lock` for its whole life. That is an fcntl lock, which the kernel
 * releases when the process ends in any way (SIGKILL, a crash; it is not held
 * by the zombie a killed process leaves) and which a reboot or a container
 * restart cannot leave behind. So a live holder is recognised positively, and
 * a pid file left by a dead one, whatever process its pid names now, is taken
 * over. Two processes starting at once get the lock one at a time: exactly one
 * wins. Throws {@link DataDirInUseError} when a live process holds it.
 */
export function lockDataDir(dataDir: string, options: LockDataDirOptions = {}): DataDirLock {
  const lock = takeOsLock(dataDir);
  if (!lock) throw new DataDirInUseError(dataDir, pidInFile(dataDir));
  const file = serverPidFile(dataDir);
  const own = String(process.pid);
  // A graceful stop removes the pid file: finding one under a free lock means its writer died holding the directory.
  const previousServerDied = existsSync(file);
  try {
    if (options.writePid ?? true) writeFileSync(file, own);
  } catch (error) {
    lock.close();
    throw error;
  }
  return {
    previousServerDied,
    release() {
      try {
        if (readFileSync(file, "utf8").trim() === own) rmSync(file);
      } catch {
        // already gone
      }
      // Closing the connection ends its transaction and so releases the lock.
      lock.close();
    },
  };
}

/**
 * The exclusive lock on `server.lock`, or undefined when another process (or
 * another connection of this one) holds it. Never opened with plain fs calls
 * in the holding process: closing any descriptor of a file drops the process's
 * fcntl locks on it, and SQLite alone keeps its descriptors open for that reason.
 */
function takeOsLock(dataDir: string): Database.Database | undefined {
  // timeout 0: a held lock answers at once instead of retrying for better-sqlite3's default 5 s.
  const connection = new Database(serverLockFile(dataDir), { timeout: 0 });
  try {
    connection.pragma("locking_mode = EXCLUSIVE");
    connection.exec("BEGIN EXCLUSIVE");
    return connection;
  } catch (error) {
    connection.close();
    if ((error as { code?: string }).code === "SQLITE_BUSY") return undefined;
    throw error;
  }
}

function pidInFile(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(serverPidFile(dataDir), "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
