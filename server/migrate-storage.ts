import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { CliUsageError, formatTable, requiredOption, silentLogger, type CliCommand, type Doc, type Reachkit } from "../src/index.ts";
import { dataDirSecret, publicUrlFromEnv } from "./config.ts";
import { createServerKit } from "./server-kit.ts";

/** Documents read and written per step: bounded memory whatever the collection's size. */
const PAGE = 1_000;

/** The collections recorded in a SQLite data directory's schema ledger (every collection ever created there). */
function sqliteCollections(file: string): string[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare(`SELECT collection FROM "_reachkit_schema" ORDER BY collection`).pluck().all() as string[]);
  } finally {
    db.close();
  }
}

async function copyCollection(from: Reachkit, to: Reachkit, name: string): Promise<number> {
  const source = from.storage.collection<Doc>(name);
  const target = to.storage.collection<Doc>(name);
  let copied = 0;
  let after: string | undefined;
  do {
    const page = await source.find({ limit: PAGE, after });
    await target.upsertMany(page.items);
    copied += page.items.length;
    after = page.nextCursor;
  } while (after !== undefined);
  return copied;
}

/**
 * `reachkit migrate-storage --from sqlite:DIR --to postgres://...`: copies
 * every collection of a SQLite data directory into an empty PostgreSQL
 * database (docs/scaling.md). Stop the server first: writes made during the
 * copy would be missed.
 */
export const migrateStorage: CliCommand = {
  name: "migrate-storage",
  summary: "Copy every collection of a SQLite data directory into an empty PostgreSQL database (stop the server first)",
  options: {
    from: { type: "string", description: "The source: sqlite:DIR (a data directory)", required: true, placeholder: "sqlite:DIR" },
    to: { type: "string", description: "The target PostgreSQL URL; its database must hold no reachkit data yet", required: true, placeholder: "postgres://..." },
  },
  async run(values) {
    const from = requiredOption(values, "from");
    const to = requiredOption(values, "to");
    if (!from.startsWith("sqlite:")) throw new CliUsageError("--from must be sqlite:DIR, a data directory");
    if (!/^postgres(ql)?:\/\//.test(to)) throw new CliUsageError("--to must be a PostgreSQL URL (postgres://user:password@host:port/database)");
    const dataDir = resolve(from.slice("sqlite:".length));
    const file = join(dataDir, "reachkit.db");
    if (!existsSync(file)) throw new CliUsageError(`${dataDir} holds no reachkit.db`);
    const names = sqliteCollections(file);
    const options = { dataDir, publicUrl: publicUrlFromEnv(process.env), secret: dataDirSecret(dataDir), logger: silentLogger() };
    // Both kits declare every plugin's collections and indexes; neither runs jobs.
    const source = createServerKit(options);
    const target = createServerKit({ ...options, databaseUrl: to });
    await source.start({ runJobs: false });
    try {
      await target.start({ runJobs: false });
      try {
        for (const name of names) {
          // The target's own start wrote its migration ledger; any other document means data is there already.
          if (name !== "reachkit_migrations" && (await target.storage.collection<Doc>(name).count()) > 0) {
            throw new Error(`the target database already holds ${name} documents: migrate into an empty database`);
          }
        }
        const rows: { collection: string; documents: number }[] = [];
        for (const name of names) rows.push({ collection: name, documents: await copyCollection(source, target, name) });
        return {
          json: { collections: rows },
          text: `${formatTable(rows)}\nCopied. Run the servers with REACHKIT_DATABASE_URL and the secret of ${dataDir} (REACHKIT_SECRET, or keep that data directory).\n`,
        };
      } finally {
        await target.stop();
      }
    } finally {
      await source.stop();
    }
  },
};
