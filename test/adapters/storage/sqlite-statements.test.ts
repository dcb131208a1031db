import assert from "node:assert/strict";
import { join } from "node:path";
import { it } from "node:test";
import Database from "better-sqlite3";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import type { Doc } from "../../../src/ports/storage.ts";
import { statementsOf, watchStatements } from "../../support/sqlite-statements.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";

interface Thing extends Doc {
  group: string;
}

it("prepares a few statements for `in` lists of every length, not one per length, and each still finds exactly its documents", async () => {
  const storage = sqliteStorage({ filename: join(temporaryDirectory("sqlite-statements"), "db.sqlite") });
  await storage.ensureCollections([{ name: "things", indexes: [{ fields: ["group"] }] }]);
  const things = storage.collection<Thing>("things");
  const ids = Array.from({ length: 600 }, (_, i) => `t${String(i).padStart(4, "0")}`);
  for (const id of ids) await things.insert({ id, group: Number(id.slice(1)) % 2 === 0 ? "even" : "odd" });

  const prototype = Database.prototype as unknown as { prepare(this: Database.Database, sql: string): Database.Statement };
  const prepare = prototype.prepare;
  const prepared = new Set<string>();
  prototype.prepare = function (this: Database.Database, sql: string) {
    prepared.add(sql);
    return prepare.call(this, sql);
  };
  try {
    for (let length = 1; length <= ids.length; length++) {
      const asked = ids.slice(ids.length - length);
      const found = await things.find({ where: { id: { in: asked }, group: "even" }, limit: 1000 });
      assert.deepEqual(
        found.items.map((thing) => thing.id).sort(),
        asked.filter((id) => Number(id.slice(1)) % 2 === 0),
        `an in-list of ${length}`,
      );
      assert.equal(await things.count({ id: { in: asked } }), length, `count of an in-list of ${length}`);
    }
  } finally {
    prototype.prepare = prepare;
    await storage.close();
  }
  // Lengths 1 to 8 exactly, then 16, 32, ..., 1,024: 15 shapes, for the find and for the count.
  const inLists = [...prepared].filter((sql) => sql.includes(" IN ("));
  assert.ok(inLists.length <= 30, `${inLists.length} statements prepared`);
});

it("updateWhere patches every matching document with one statement, however many match", async () => {
  const storage = sqliteStorage({ filename: join(temporaryDirectory("sqlite-statements"), "db.sqlite") });
  await storage.ensureCollections([{ name: "things", indexes: [{ fields: ["group"] }] }]);
  const things = storage.collection<Thing & { state?: string; attempt?: number }>("things");
  await things.upsertMany(Array.from({ length: 300 }, (_, i) => ({ id: `t${i}`, group: i % 3 === 0 ? "due" : "later", attempt: 1 })));

  const executed = await statementsOf(async () => assert.equal(await things.updateWhere({ group: "due" }, { state: "in-flight", group: "sending", attempt: undefined }), 100));
  assert.equal(executed.length, 1, executed.join("\n"));
  assert.equal(await things.count({ group: "sending", state: "in-flight", attempt: { exists: false } }), 100);
  assert.equal(await things.count({ group: "later", attempt: 1 }), 200);
  await storage.close();
});

it("update patches one document with one statement, inside a transaction and out, and answers it as stored", async () => {
  const storage = sqliteStorage({ filename: join(temporaryDirectory("sqlite-statements"), "db.sqlite") });
  await storage.ensureCollections([{ name: "things", indexes: [{ fields: ["group"] }] }]);
  const things = storage.collection<Thing & { state?: string; attempt?: number }>("things");
  await things.upsertMany(Array.from({ length: 3 }, (_, i) => ({ id: `t${i}`, group: "due", attempt: 1 })));

  const alone = await statementsOf(async () => assert.deepEqual(await things.update("t0", { state: "sent", attempt: undefined }, { where: { group: "due" } }), { id: "t0", group: "due", state: "sent" }));
  assert.equal(alone.length, 1, alone.join("\n"));
  const missed = await statementsOf(async () => assert.equal(await things.update("t1", { state: "sent" }, { where: { group: "later" } }), undefined));
  assert.equal(missed.length, 1, missed.join("\n"));
  const inTransaction = await statementsOf(() => storage.transaction(() => things.update("t2", { group: "sent" })));
  // BEGIN, the update, COMMIT.
  assert.equal(inTransaction.length, 3, inTransaction.join("\n"));
  assert.deepEqual((await things.find({ where: { group: "sent" } })).items, [{ id: "t2", group: "sent", attempt: 1 }]);
  assert.deepEqual(await things.get("t1"), { id: "t1", group: "due", attempt: 1 });
  await storage.close();
});

it("updateEach writes the patches of one shape with one statement, inside a transaction with no savepoint; each of two shapes with its own, in a savepoint", async () => {
  const storage = sqliteStorage({ filename: join(temporaryDirectory("sqlite-statements"), "db.sqlite") });
  await storage.ensureCollections([{ name: "things", indexes: [{ fields: ["group"] }] }]);
  const things = storage.collection<Thing & { attempt?: number; note?: string | null }>("things");
  await things.upsertMany(Array.from({ length: 11 }, (_, i) => ({ id: `t${i}`, group: "due" })));
  const ofOneShape = Array.from({ length: 11 }, (_, i) => ({ id: `t${i}`, patch: { attempt: i, group: i % 2 === 0 ? "even" : undefined } }));
  const writes = (statements: string[]) => statements.filter((sql) => /^(SAVEPOINT|UPDATE)/.test(sql)).map((sql) => sql.split(" ")[0]);
  const oneShape = await statementsOf(() => storage.transaction(async () => assert.equal(await things.updateEach(ofOneShape), 11)));
  assert.deepEqual(writes(oneShape), ["UPDATE"]);
  assert.deepEqual((await things.find({ where: { group: "even" } })).items.map((thing) => thing.attempt), [0, 10, 2, 4, 6, 8]);
  // A null is another shape (json_set rather than json_patch): two statements, atomic together.
  const twoShapes = await statementsOf(() => storage.transaction(() => things.updateEach([{ id: "t1", patch: { note: "one" } }, { id: "t2", patch: { note: null } }])));
  assert.deepEqual(writes(twoShapes), ["SAVEPOINT", "UPDATE", "UPDATE"]);
  assert.deepEqual([(await things.get("t1"))?.note, (await things.get("t2"))?.note], ["one", null]);
  await storage.close();
});

it("updateEach pads a statement's rows with rows that match no document: 65 patches are one statement of 128 rows, each document in it once, each with its own patch", async () => {
  const storage = sqliteStorage({ filename: join(temporaryDirectory("sqlite-statements"), "db.sqlite") });
  await storage.ensureCollections([{ name: "things", indexes: [{ fields: ["group"] }] }]);
  const things = storage.collection<Thing & { attempt?: number }>("things");
  const ids = Array.from({ length: 65 }, (_, i) => `t${i}`);
  await things.upsertMany(ids.map((id) => ({ id, group: "due" })));
  const updates: Array<{ sql: string; args: unknown[] }> = [];
  await watchStatements(
    () => things.updateEach(ids.map((id, i) => ({ id, patch: { attempt: i, group: "sent" } }))),
    (statement, args) => {
      if (statement.source.startsWith("UPDATE")) updates.push({ sql: statement.source, args });
    },
  );
  assert.equal(updates.length, 1);
  const [{ sql, args }] = updates as [{ sql: string; args: unknown[] }];
  const rows = sql.match(/\(\?(, \?)*\)/g)!;
  assert.equal(rows.length, 128);
  const paramsPerRow = args.length / rows.length;
  const rowIds = Array.from({ length: rows.length }, (_, row) => args[row * paramsPerRow]);
  assert.deepEqual(rowIds.slice(0, 65), ids);
  assert.deepEqual(new Set(rowIds.slice(65)), new Set([null]));
  const stored = await Promise.all(ids.map((id) => things.get(id)));
  assert.deepEqual(stored, ids.map((id, i) => ({ id, group: "sent", attempt: i })));
  await storage.close();
});
