import pg from "pg";
import { fakeClock } from "../../adapters/clock/index.ts";
import { memoryObjectStorage } from "../../adapters/object-storage/memory/index.ts";
import { manualScheduler } from "../../adapters/scheduler/manual/index.ts";
import { memorySms } from "../../adapters/sms/memory/index.ts";
import { memoryStorage } from "../../adapters/storage/memory/index.ts";
import { postgresStorage } from "../../adapters/storage/postgres/index.ts";
import { LEDGER_TABLE } from "../../adapters/storage/postgres/schema.ts";
import { serverPlugins } from "../../server/server-kit.ts";
import { createReachkit, silentLogger, type Storage } from "../../src/index.ts";
import { createDatabase, startPostgres } from "./postgres.ts";
import { wrapStorage } from "./storage-wrappers.ts";

/**
 * The storage a test kit gets when the test names none: memory by default,
 * PostgreSQL with `REACHKIT_TEST_STORAGE=postgres`. Each kit then gets a
 * database of its own: an emptied one of an earlier kit of this process, or a
 * copy of a template that already holds every plugin's collections: `REACHKIT_TEST_DATABASE_URL` when set (a parent test
 * prepared it for several test processes), else a throw-away cluster of this
 * process, started on first use and stopped when the process exits.
 */
export function testStorageKind(): "memory" | "postgres" {
  const kind = process.env.REACHKIT_TEST_STORAGE ?? "memory";
  if (kind !== "memory" && kind !== "postgres") {
    throw new Error(`REACHKIT_TEST_STORAGE must be "memory" or "postgres", got "${kind}"`);
  }
  return kind;
}

let template: Promise<string> | undefined;
/** Databases of this process whose kit has stopped, emptied for the next kit. */
const idle: string[] = [];

export async function testStorage(): Promise<Storage> {
  if (testStorageKind() === "memory") return memoryStorage();
  const shared = process.env.REACHKIT_TEST_DATABASE_URL;
  template ??= shared ? Promise.resolve(shared) : startPostgres().then((cluster) => cluster.createDatabase()).then(prepareTemplate);
  const url = await template;
  const database = idle.pop() ?? (await createDatabase(url, new URL(url).pathname.slice(1)));
  return recycled(postgresStorage({ url: database, poolSize: 4 }), database);
}

/**
 * `storage`, whose database is emptied and kept for the next kit once it is
 * closed (a kit's stop closes it). Copying the template for every kit wrote
 * some 8 MB per test and took about as long as the test itself.
 */
function recycled(storage: Storage, database: string): Storage {
  return wrapStorage(storage, {
    async close() {
      await storage.close();
      await emptyDatabase(database);
      idle.push(database);
    },
  });
}

/** Deletes every document of every table but the schema ledger; tables, indexes and functions stay. */
async function emptyDatabase(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      `SELECT quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = current_schema() AND tablename <> $1`,
      [LEDGER_TABLE],
    );
    if (rows.length > 0) await client.query(rows.map(({ name }) => `DELETE FROM ${name}`).join(";\n"));
  } finally {
    await client.end();
  }
}

/** Creates every collection of the self-hosted server's plugins in the database at `url`; returns `url`. */
export async function prepareTemplate(url: string): Promise<string> {
  const clock = fakeClock("2026-03-01T12:00:00.000Z");
  const kit = createReachkit({
    storage: postgresStorage({ url, poolSize: 1 }),
    scheduler: manualScheduler(clock),
    clock,
    sms: memorySms(),
    objectStorage: memoryObjectStorage({ clock }),
    logger: silentLogger(),
    secret: "template-secret-template-secret-0123456",
    plugins: serverPlugins(),
  });
  await kit.start();
  await kit.stop();
  return url;
}
