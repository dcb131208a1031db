// On PostgreSQL every table is a heap: an index holds its key and the row's place, not the id. Each index but a unique
// one ends with the id, so that a query by its fields in id order (a webhook's deliveries after one, or newest first)
// walks it in order instead of sorting every row that matches; an index an earlier version built without it is built
// again. What the storage conformance suite cannot see: the plan.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import pg from "pg";
import { postgresStorage } from "../../../adapters/storage/postgres/index.ts";
import { findQuery } from "../../../adapters/storage/postgres/where-sql.ts";
import type { CollectionSpec, Doc } from "../../../src/ports/storage.ts";
import { usePostgresDatabase, withSchemaClient } from "../../support/postgres.ts";

interface Entry extends Doc {
  owner: string;
  sku: string;
}

const LOG: CollectionSpec = { name: "log", indexes: [{ fields: ["owner"] }, { fields: ["sku"], unique: true }] };

describe("PostgreSQL indexes", () => {
  const databaseUrl = usePostgresDatabase();

  const withClient = <T>(schema: string, body: (client: pg.Client) => Promise<T>) => withSchemaClient(databaseUrl(), schema, body);

  it("end with the id but a unique one, read in id order without a sort; one built without it by an earlier version is built again", async () => {
    const schema = "index_order";
    const earlier = postgresStorage({ url: databaseUrl(), schema, poolSize: 1 });
    await earlier.ensureCollections([LOG]);
    await earlier.close();
    // As an earlier version built it: the field's key alone.
    await withClient(schema, async (client) => {
      await client.query(`DROP INDEX "ix_log__owner"`);
      await client.query(`CREATE INDEX "ix_log__owner" ON "log" (reachkit_key(doc -> 'owner') NULLS FIRST)`);
    });
    const storage = postgresStorage({ url: databaseUrl(), schema, poolSize: 1 });
    await storage.ensureCollections([LOG]);
    const log = storage.collection<Entry>("log");
    await log.upsertMany(Array.from({ length: 3_000 }, (_, n) => ({ id: `e${String(n).padStart(4, "0")}`, owner: `o${n % 3}`, sku: `s${n}` })));
    const after = await log.find({ where: { owner: "o1", id: { gt: "e0010" } }, orderBy: [{ field: "id" }], limit: 3 });
    assert.deepEqual(after.items.map((entry) => entry.id), ["e0013", "e0016", "e0019"]);
    await storage.close();
    await withClient(schema, async (client) => {
      const { rows } = await client.query<{ indexname: string; indexdef: string }>(`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'log' AND indexname <> 'log_pkey' ORDER BY indexname`, [schema]);
      assert.deepEqual(
        rows.map((index) => [index.indexname, index.indexdef.endsWith(", id NULLS FIRST)")]),
        [["ix_log__owner", true], ["ux_log__sku", false]],
      );
      await client.query("ANALYZE log");
      for (const direction of ["asc", "desc"] as const) {
        const { sql, params } = findQuery("log", { where: { owner: "o1", id: { gt: "e0010" } }, orderBy: [{ field: "id", direction }] }, 3);
        const plan = (await client.query<{ "QUERY PLAN": string }>(`EXPLAIN ${sql}`, params as unknown[])).rows.map((row) => row["QUERY PLAN"]).join("\n");
        assert.doesNotMatch(plan, /Sort|Seq Scan/, plan);
      }
    });
  });
});
