import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { CliUsageError, requiredOption, type CliCommand } from "../src/index.ts";
import { dataDirHolder } from "./data-dir-lock.ts";

/** The reachkit storage's own table: a database without it is not a reachkit database. */
const SCHEMA_LEDGER = "_reachkit_schema";

const databaseOf = (dataDir: string) => join(dataDir, "reachkit.db");

/**
 * Copies a live SQLite database with SQLite's online backup API, in one step:
 * the copy is the database as one read transaction saw it (a consistent
 * snapshot), while the server goes on writing beside it (WAL readers never
 * block writers). In several steps, a write between two steps would restart the copy.
 */
async function copyDatabase(from: string, to: string): Promise<number> {
  const source = new Database(from, { readonly: true, fileMustExist: true });
  try {
    const { totalPages } = await source.backup(to, { progress: () => Number.MAX_SAFE_INTEGER });
    return totalPages;
  } finally {
    source.close();
  }
}

/** Refuses a file that is not a sound reachkit database. */
function checkBackupFile(file: string): void {
  let database: Database.Database;
  try {
    database = new Database(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new CliUsageError(`${file} cannot be opened as an SQLite database: ${(error as Error).message}`);
  }
  try {
    const check = database.pragma("quick_check", { simple: true });
    if (check !== "ok") throw new CliUsageError(`${file} is damaged (SQLite quick_check: ${String(check)})`);
    const ledger = database.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?").get(SCHEMA_LEDGER);
    if (!ledger) throw new CliUsageError(`${file} is not a reachkit database`);
  } catch (error) {
    if (error instanceof CliUsageError) throw error;
    throw new CliUsageError(`${file} is not a readable SQLite database: ${(error as Error).message}`);
  } finally {
    database.close();
  }
}

export const backupCommand: CliCommand = {
  name: "backup",
  summary: "Copy the data directory's database to a file, consistent, while the server runs and writes",
  options: { out: { type: "string", description: "The backup file to write (must not exist)", required: true, placeholder: "FILE" } },
  async run(values, context) {
    const out = resolve(requiredOption(values, "out"));
    const database = databaseOf(context.dataDir);
    if (!existsSync(database)) throw new CliUsageError(`no reachkit database in ${context.dataDir}`);
    if (existsSync(out)) throw new CliUsageError(`${out} exists already; choose a new file`);
    const pages = await copyDatabase(database, out);
    checkBackupFile(out);
    return { json: { backup: out, pages }, text: `backed up ${database} to ${out} (${pages} pages)` };
  },
};

export const restoreCommand: CliCommand = {
  name: "restore",
  summary: "Replace the data directory's database with a backup; refused while a server serves the directory",
  options: { from: { type: "string", description: "A file written by `reachkit backup`", required: true, placeholder: "FILE" } },
  async run(values, context) {
    const from = resolve(requiredOption(values, "from"));
    if (!existsSync(from)) throw new CliUsageError(`${from} does not exist`);
    const holder = dataDirHolder(context.dataDir);
    if (holder !== undefined) throw new CliUsageError(`a reachkit server (pid ${holder}) serves ${context.dataDir}: stop it before restoring`);
    checkBackupFile(from);
    mkdirSync(context.dataDir, { recursive: true });
    const database = databaseOf(context.dataDir);
    // Through SQLite, not a file copy: the backup API replaces the pages under SQLite's own locks and the WAL a crash may have left.
    const pages = await copyDatabase(from, database);
    return { json: { restored: database, from, pages }, text: `restored ${database} from ${from} (${pages} pages)` };
  },
};
