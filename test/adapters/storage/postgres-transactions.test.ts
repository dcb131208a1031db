import assert from "node:assert/strict";
import { describe, it } from "node:test";
import pg from "pg";
import { postgresStorage } from "../../../adapters/storage/postgres/index.ts";
import { UniqueConstraintError, type CollectionSpec, type Doc, type Storage } from "../../../src/ports/storage.ts";
import { usePostgresDatabase } from "../../support/postgres.ts";

// PostgreSQL runs the transactions of one process side by side (the storage conformance suite
// covers what every storage promises); these pin down what that means on PostgreSQL alone.

interface Row extends Doc {
  value?: number;
  email?: string;
}

const SPECS: CollectionSpec[] = [{ name: "rows", indexes: [{ fields: ["email"], unique: true }] }, { name: "notes", indexes: [{ fields: ["email"] }] }];

const databaseUrl = usePostgresDatabase();

let schemas = 0;
async function withStorage(poolSize: number, body: (storage: Storage) => Promise<void>): Promise<void> {
  const storage = postgresStorage({ url: databaseUrl(), schema: `concurrency_${++schemas}`, poolSize });
  try {
    await storage.ensureCollections(SPECS);
    await body(storage);
  } finally {
    await storage.close();
  }
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((res) => (resolve = res));
  return { promise, resolve };
}

/** Resolves once `count` callers have arrived. */
function meeting(count: number): () => Promise<void> {
  const everyone = deferred();
  let arrived = 0;
  return () => {
    if (++arrived === count) everyone.resolve();
    return everyone.promise;
  };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** The SQL of every statement the pg driver's clients send while `work` runs. */
async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: Parameters<typeof query>) {
    const config = args[0] as unknown;
    sent.push(typeof config === "string" ? config : String((config as { text?: unknown }).text));
    return query.apply(this, args);
  } as typeof query;
  try {
    await work();
  } finally {
    pg.Client.prototype.query = query;
  }
  return sent;
}

describe("PostgreSQL transactions side by side", () => {
  it("two transactions locking two rows in opposite orders: one is aborted as a deadlock (40P01) and rolls back whole, the other commits", { timeout: 30_000 }, () =>
    withStorage(4, async (storage) => {
      const rows = storage.collection<Row>("rows");
      await rows.upsertMany([
        { id: "x", value: 0 },
        { id: "y", value: 0 },
      ]);
      const bothHoldTheirFirstRow = meeting(2);
      const writeBoth = (first: string, second: string, value: number) =>
        storage.transaction(async () => {
          await rows.update(first, { value });
          await bothHoldTheirFirstRow();
          await rows.update(second, { value });
        });
      const outcomes = await Promise.allSettled([writeBoth("x", "y", 1), writeBoth("y", "x", 2)]);

      const failed = outcomes.filter((outcome) => outcome.status === "rejected");
      assert.equal(failed.length, 1, "exactly one transaction fails");
      assert.equal((failed[0]!.reason as { code?: string }).code, "40P01");
      const winner = outcomes[0]!.status === "fulfilled" ? 1 : 2;
      assert.deepEqual(await rows.get("x"), { id: "x", value: winner });
      assert.deepEqual(await rows.get("y"), { id: "y", value: winner });
    }));

  it("a unique value taken by another open transaction: the insert waits for it, then fails with UniqueConstraintError, which the transaction catches and carries on", { timeout: 30_000 }, () =>
    withStorage(4, async (storage) => {
      const rows = storage.collection<Row>("rows");
      const firstInserted = deferred();
      const secondStarted = deferred();
      const first = storage.transaction(async () => {
        await rows.insert({ id: "first", email: "taken@example.com" });
        firstInserted.resolve();
        await secondStarted.promise;
        await nextTurn();
      });
      await firstInserted.promise;
      let caught: unknown;
      await storage.transaction(async () => {
        secondStarted.resolve();
        try {
          await rows.insert({ id: "second", email: "taken@example.com" });
        } catch (error) {
          caught = error;
        }
        await rows.insert({ id: "third", email: "free@example.com" });
      });
      await first;
      assert.ok(caught instanceof UniqueConstraintError, `expected a UniqueConstraintError, got ${String(caught)}`);
      assert.deepEqual(
        (await rows.find({ orderBy: [{ field: "id" }] })).items.map((row) => row.id),
        ["first", "third"],
      );
    }));

  it("an insert inside a transaction is one statement: no savepoint unless its row takes a unique key", { timeout: 30_000 }, () =>
    withStorage(2, async (storage) => {
      const rows = storage.collection<Row>("rows");
      await rows.insert({ id: "taken", email: "taken@example.com" });
      const free = await statementsOf(() => storage.transaction(() => rows.insert({ id: "free", email: "free@example.com" })));
      assert.deepEqual(free.map((sql) => sql.split(" ")[0]), ["BEGIN", "INSERT", "COMMIT"]);
      let refused: unknown;
      const taken = await statementsOf(() => storage.transaction(() => rows.insert({ id: "other", email: "taken@example.com" }).catch((error: unknown) => (refused = error))));
      assert.ok(refused instanceof UniqueConstraintError);
      assert.deepEqual(refused.fields, ["email"]);
      assert.ok(taken.includes("SAVEPOINT rk_write"), taken.join("; "));
      assert.deepEqual((await rows.find({ orderBy: [{ field: "id" }] })).items.map((row) => row.id), ["free", "taken"]);
    }));

  it("an upsert inside a transaction goes without a savepoint where the collection has no unique index", { timeout: 30_000 }, () =>
    withStorage(2, async (storage) => {
      const notes = storage.collection<Row>("notes");
      const rows = storage.collection<Row>("rows");
      const plain = await statementsOf(() => storage.transaction(() => Promise.all([notes.upsert({ id: "n", email: "a@example.com" }), notes.upsertMany([{ id: "m" }, { id: "n", value: 2 }])])));
      assert.deepEqual(plain.map((sql) => sql.split(" ")[0]), ["BEGIN", "INSERT", "INSERT", "COMMIT"]);
      const unique = await statementsOf(() => storage.transaction(() => rows.upsert({ id: "r", email: "r@example.com" })));
      assert.deepEqual(unique.map((sql) => sql.split(" ")[0]), ["BEGIN", "SAVEPOINT", "INSERT", "RELEASE", "COMMIT"]);
      assert.deepEqual((await notes.find({ orderBy: [{ field: "id" }] })).items, [{ id: "m" }, { id: "n", value: 2 }]);
    }));

  it("more transactions at once than pooled connections: the extra one begins once another has committed, and all commit", { timeout: 30_000 }, () =>
    withStorage(2, async (storage) => {
      const rows = storage.collection<Row>("rows");
      const twoEntered = meeting(2);
      const holders = ["a", "b"].map((id) =>
        storage.transaction(async () => {
          await rows.insert({ id });
          await twoEntered();
        }),
      );
      // Asks for a connection while both are held: it gets one only after a holder has committed.
      const seenOnEntering = storage.transaction(async () => {
        const committedBefore = await rows.count();
        await rows.insert({ id: "c" });
        return committedBefore;
      });
      await Promise.all(holders);
      assert.ok((await seenOnEntering) >= 1, "the third transaction began while both connections were held");
      assert.equal(await rows.count(), 3);
    }));
});
