// A sparse index (IndexSpec.sparse) leaves out the documents where one of its fields is absent or null: on
// SQLite and PostgreSQL a partial index. What the storage conformance suite cannot see: that the engine reads
// through it for the queries it must serve, and that a database made while the index was full gets the
// partial index in its place when it is opened again (and the full one back when the declaration goes back).
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import Database from "better-sqlite3";
import pg from "pg";
import { postgresStorage } from "../../../adapters/storage/postgres/index.ts";
import { findQuery } from "../../../adapters/storage/postgres/where-sql.ts";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import { normalizeSpecs } from "../../../adapters/storage/sqlite/schema.ts";
import { findQueries } from "../../../adapters/storage/sqlite/where-sql.ts";
import type { CollectionSpec, Doc, Storage, Where } from "../../../src/ports/storage.ts";
import { usePostgresDatabase, withSchemaClient } from "../../support/postgres.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";

interface Job extends Doc {
  status: string;
  leaseUntil?: number | null;
  key?: string | null;
}

const FULL: CollectionSpec = { name: "tasks", indexes: [{ fields: ["status", "leaseUntil"] }, { fields: ["key"], unique: true }] };
const SPARSE: CollectionSpec = { name: "tasks", indexes: FULL.indexes!.map((index) => ({ ...index, sparse: true })) };
const SPARSE_NAMES = ["ixs_tasks__status__leaseUntil", "uxs_tasks__key"];
const FULL_NAMES = ["ix_tasks__status__leaseUntil", "ux_tasks__key"];

/**
 * Queries that name every field of one of the sparse indexes, and the index each must read through. A range
 * is asked in the index's order, as the job runner asks (a range read in id order may rather walk the ids).
 */
const SERVED: Array<{ where: Where<Job>; orderBy?: Array<{ field: keyof Job & string }>; index: string }> = [
  { where: { key: "k-7" }, index: "uxs_tasks__key" },
  { where: { key: { in: ["k-7", "k-8"] } }, index: "uxs_tasks__key" },
  { where: { key: { gt: "k-5" } }, orderBy: [{ field: "key" }], index: "uxs_tasks__key" },
  { where: { key: { exists: true } }, orderBy: [{ field: "key" }], index: "uxs_tasks__key" },
  { where: { status: "running", leaseUntil: { lte: 1_000 } }, orderBy: [{ field: "leaseUntil" }], index: "ixs_tasks__status__leaseUntil" },
  { where: { status: "running", leaseUntil: { exists: true } }, orderBy: [{ field: "leaseUntil" }], index: "ixs_tasks__status__leaseUntil" },
  { where: { status: { in: ["running", "queued"] }, leaseUntil: { lt: 500, gt: 10 } }, index: "ixs_tasks__status__leaseUntil" },
];

/** Most jobs queued without key or lease, as the job runner stores them; a few running or keyed. */
function jobs(count: number): Job[] {
  return Array.from({ length: count }, (_, i) => {
    const job: Job = { id: `job-${String(i).padStart(5, "0")}`, status: i % 50 === 0 ? "running" : "queued", leaseUntil: i % 50 === 0 ? i : null };
    if (i % 100 === 0) job.key = `k-${i / 100}`;
    return job;
  });
}

async function answers(storage: Storage): Promise<string[][]> {
  const tasks = storage.collection<Job>("tasks");
  const wheres: Where<Job>[] = [...SERVED.map((query) => query.where), { key: null }, { status: "running", leaseUntil: null }, { status: "queued" }];
  return Promise.all(wheres.map(async (where) => (await tasks.find({ where, orderBy: [{ field: "id" }] })).items.map((job) => job.id)));
}

describe("sparse indexes on SQLite", () => {
  const indexes = (file: string) => {
    const db = new Database(file, { readonly: true });
    try {
      return db.prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'tasks' AND name NOT LIKE 'sqlite_%' ORDER BY name`).all() as Array<{ name: string; sql: string }>;
    } finally {
      db.close();
    }
  };

  it("are partial indexes that every query naming their fields with a comparison reads through", async () => {
    const file = join(temporaryDirectory("sparse-sqlite"), "kit.db");
    const storage = sqliteStorage({ filename: file });
    await storage.ensureCollections([SPARSE]);
    await storage.collection<Job>("tasks").upsertMany(jobs(2_000));
    await storage.close();
    assert.deepEqual(indexes(file), [
      { name: SPARSE_NAMES[0], sql: `CREATE INDEX "${SPARSE_NAMES[0]}" ON "tasks" ("f_status", "f_leaseUntil") WHERE "f_status" IS NOT NULL AND "f_leaseUntil" IS NOT NULL` },
      { name: SPARSE_NAMES[1], sql: `CREATE UNIQUE INDEX "${SPARSE_NAMES[1]}" ON "tasks" ("f_key") WHERE "f_key" IS NOT NULL` },
    ]);
    const db = new Database(file, { readonly: true });
    try {
      const [declared] = normalizeSpecs([SPARSE]);
      // Of 2,000 jobs, 40 are running with a lease and 20 have a key: the indexes hold those only.
      assert.equal(db.prepare(`SELECT count(*) FROM tasks INDEXED BY "${SPARSE_NAMES[0]}" WHERE "f_status" IS NOT NULL AND "f_leaseUntil" IS NOT NULL`).pluck().get(), 40);
      for (const { where, orderBy, index } of SERVED) {
        for (const { sql, params } of findQueries(declared!, { where, orderBy }, 10)) {
          const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((step) => step.detail).join("; ");
          assert.match(plan, new RegExp(`^SEARCH tasks USING (COVERING )?INDEX ${index} `), `${JSON.stringify(where)}: ${plan}`);
        }
      }
    } finally {
      db.close();
    }
  });

  it("replace the full indexes of a database made before they were sparse, and give them back when the declaration does", async () => {
    const file = join(temporaryDirectory("sparse-sqlite"), "kit.db");
    const earlier = sqliteStorage({ filename: file });
    await earlier.ensureCollections([FULL]);
    await earlier.collection<Job>("tasks").upsertMany(jobs(500));
    const expected = await answers(earlier);
    await earlier.close();
    for (const [spec, names] of [[SPARSE, SPARSE_NAMES], [FULL, FULL_NAMES]] as const) {
      const storage = sqliteStorage({ filename: file });
      await storage.ensureCollections([spec]);
      assert.deepEqual(await answers(storage), expected);
      await storage.close();
      assert.deepEqual(indexes(file).map((index) => [index.name, index.sql.includes(" WHERE ")]), names.map((name) => [name, spec === SPARSE]));
    }
  });
});

describe("sparse indexes on PostgreSQL", () => {
  const databaseUrl = usePostgresDatabase();
  let schemas = 0;

  const withClient = <T>(schema: string, body: (client: pg.Client) => Promise<T>) => withSchemaClient(databaseUrl(), schema, body);

  const indexes = (schema: string) =>
    withClient(schema, async (client) => {
      const { rows } = await client.query<{ indexname: string; indexdef: string }>(`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'tasks' AND indexname <> 'tasks_pkey' ORDER BY indexname`, [schema]);
      return rows;
    });

  it("are partial indexes that every query naming their fields with a comparison reads through", async () => {
    const schema = `sparse_${++schemas}`;
    const storage = postgresStorage({ url: databaseUrl(), schema, poolSize: 1 });
    await storage.ensureCollections([SPARSE]);
    await storage.collection<Job>("tasks").upsertMany(jobs(2_000));
    await storage.close();
    const found = await indexes(schema);
    assert.deepEqual(found.map((index) => index.indexname), SPARSE_NAMES);
    for (const { indexdef } of found) assert.match(indexdef, / WHERE \(+reachkit_key\(\(doc -> '\w+'::text\)\) IS NOT NULL\)/, indexdef);
    await withClient(schema, async (client) => {
      await client.query("ANALYZE tasks");
      // A table this small might be read whole by choice: forbid that, so only an index the query can use is used.
      await client.query("SET enable_seqscan = off");
      for (const { where, orderBy, index } of SERVED) {
        const { sql, params } = findQuery("tasks", { where, orderBy }, 10);
        const { rows } = await client.query<{ "QUERY PLAN": string }>(`EXPLAIN ${sql}`, params as unknown[]);
        const plan = rows.map((row) => row["QUERY PLAN"]).join("\n");
        assert.match(plan, new RegExp(`(Index (Only )?Scan using|Bitmap Index Scan on) "?${index}"? `), `${JSON.stringify(where)}:\n${plan}`);
      }
    });
  });

  it("replace the full indexes of a database made before they were sparse, and give them back when the declaration does", async () => {
    const schema = `sparse_${++schemas}`;
    const earlier = postgresStorage({ url: databaseUrl(), schema, poolSize: 1 });
    await earlier.ensureCollections([FULL]);
    await earlier.collection<Job>("tasks").upsertMany(jobs(500));
    const expected = await answers(earlier);
    await earlier.close();
    for (const [spec, names] of [[SPARSE, SPARSE_NAMES], [FULL, FULL_NAMES]] as const) {
      const storage = postgresStorage({ url: databaseUrl(), schema, poolSize: 1 });
      await storage.ensureCollections([spec]);
      assert.deepEqual(await answers(storage), expected);
      await storage.close();
      assert.deepEqual((await indexes(schema)).map((index) => [index.indexname, index.indexdef.includes(" WHERE ")]), names.map((name) => [name, spec === SPARSE]));
    }
  });
});
