import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import Database from "better-sqlite3";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import { storageConformance } from "../../../src/testkit/index.ts";
import { DELIVERIES, webhookCollections } from "../../../plugins/webhooks/records.ts";
import { wrapStorage } from "../../support/storage-wrappers.ts";
import { UniqueConstraintError, type Doc, type Storage } from "../../../src/ports/storage.ts";
import { planOf, statementsOn, tableDdl } from "../../support/sqlite-plans.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";

const directory = temporaryDirectory("sqlite-large");
let files = 0;
const newFile = () => join(directory, `db-${++files}.sqlite`);

/** Declares every collection with the largeDocuments hint. */
function allLarge(storage: Storage): Storage {
  return wrapStorage(storage, { ensureCollections: (specs) => storage.ensureCollections(specs.map((spec) => ({ ...spec, largeDocuments: true }))) });
}

// Same behaviour, other table layout: the whole Storage suite on rowid tables.
storageConformance("sqlite, every collection declared with largeDocuments", () => allLarge(sqliteStorage({ filename: newFile() })));

interface Product extends Doc {
  sku?: string;
  body?: string;
}

describe("sqlite largeDocuments collections", () => {
  it("are rowid tables (documents past 1 KB stay inline), the others WITHOUT ROWID, and the ledger says so", async () => {
    const file = newFile();
    const storage = sqliteStorage({ filename: file });
    await storage.ensureCollections([{ name: "big", largeDocuments: true }, { name: "small" }]);
    await storage.close();
    const db = new Database(file, { readonly: true });
    assert.doesNotMatch(tableDdl(db, "big"), /WITHOUT ROWID/);
    assert.match(tableDdl(db, "small"), /WITHOUT ROWID/);
    const spec = (name: string) => JSON.parse(db.prepare("SELECT spec FROM _reachkit_schema WHERE collection = ?").pluck().get(name) as string);
    assert.equal(spec("big").largeDocuments, true);
    assert.equal(spec("small").largeDocuments, undefined);
    db.close();
  });

  it("keep large documents, ids and unique keys across a reopen", async () => {
    const file = newFile();
    const specs = [{ name: "big", largeDocuments: true, indexes: [{ fields: ["sku"], unique: true }] }];
    const first = sqliteStorage({ filename: file });
    await first.ensureCollections(specs);
    const body = "x".repeat(8 * 1024);
    await first.collection<Product>("big").upsertMany([{ id: "a", sku: "A", body }, { id: "b", sku: "B", body }]);
    await first.close();
    const second = sqliteStorage({ filename: file });
    await second.ensureCollections(specs);
    const big = second.collection<Product>("big");
    assert.equal((await big.get("a"))?.body, body);
    await assert.rejects(() => big.insert({ id: "a" }), (error) => error instanceof UniqueConstraintError && error.fields.join() === "id");
    await assert.rejects(() => big.insert({ id: "c", sku: "B" }), (error) => error instanceof UniqueConstraintError && error.fields.join() === "sku");
    await second.close();
  });

  it("keep the layout a table was made with: a table made without the hint stays WITHOUT ROWID when a later declaration gives it, and reads and writes as before", async () => {
    const file = newFile();
    const earlier = sqliteStorage({ filename: file });
    await earlier.ensureCollections([{ name: "queue", indexes: [{ fields: ["due"] }] }]);
    await earlier.collection<Product & { due: number }>("queue").upsertMany([{ id: "b", due: 2, body: "x".repeat(600) }, { id: "a", due: 1 }]);
    await earlier.close();
    const later = sqliteStorage({ filename: file });
    await later.ensureCollections([{ name: "queue", largeDocuments: true, indexes: [{ fields: ["due"] }] }]);
    const queue = later.collection<Product & { due: number }>("queue");
    await later.transaction(() => queue.updateEach([{ id: "a", patch: { sku: "A" } }, { id: "b", patch: { sku: "B" } }]));
    assert.deepEqual((await queue.find({ orderBy: [{ field: "due" }] })).items.map(({ id, sku }) => [id, sku]), [["a", "A"], ["b", "B"]]);
    await later.close();
    const db = new Database(file, { readonly: true });
    assert.match(tableDdl(db, "queue"), /WITHOUT ROWID/);
    db.close();
  });

  it("include the webhooks' deliveries (a few hundred bytes each: a WITHOUT ROWID tree holds few to a page): a new database makes them a rowid table", async () => {
    const file = newFile();
    const storage = sqliteStorage({ filename: file });
    await storage.ensureCollections(webhookCollections);
    await storage.close();
    const db = new Database(file, { readonly: true });
    assert.doesNotMatch(tableDdl(db, DELIVERIES), /WITHOUT ROWID/);
    db.close();
  });

  it("end each index but a unique one with the id, so that a query by its fields in id order reads it in order; an index an earlier version built without it is rebuilt", async () => {
    const file = newFile();
    const specs = [{ name: "log", largeDocuments: true, indexes: [{ fields: ["owner"] }, { fields: ["sku"], unique: true }] }];
    const before = new Database(file);
    // As an earlier version made it: the index on the field alone.
    before.exec(`CREATE TABLE "log" (id TEXT PRIMARY KEY NOT NULL, "f_owner", "f_sku", doc TEXT NOT NULL)`);
    before.exec(`CREATE INDEX "ix_log__owner" ON "log" ("f_owner")`);
    before.close();
    const storage = sqliteStorage({ filename: file });
    await storage.ensureCollections(specs);
    const log = storage.collection<Doc & { owner: string; n: number }>("log");
    await log.upsertMany(Array.from({ length: 30 }, (_, n) => ({ id: `e${String(n).padStart(2, "0")}`, owner: `o${n % 3}`, n })));
    const statements = await statementsOn("log", async () => {
      const after = await log.find({ where: { owner: "o1", id: { gt: "e10" } }, orderBy: [{ field: "id" }], limit: 3 });
      assert.deepEqual(after.items.map((entry) => entry.id), ["e13", "e16", "e19"]);
      const newest = await log.find({ where: { owner: "o2" }, orderBy: [{ field: "id", direction: "desc" }], limit: 2 });
      assert.deepEqual(newest.items.map((entry) => entry.id), ["e29", "e26"]);
    });
    await storage.close();
    const db = new Database(file, { readonly: true });
    const columns = (index: string) => db.prepare("SELECT name FROM pragma_index_info(?) ORDER BY seqno").pluck().all(index);
    assert.deepEqual(columns("ix_log__owner"), ["f_owner", "id"]);
    assert.deepEqual(columns("ux_log__sku"), ["f_sku"]);
    for (const sql of statements) assert.deepEqual(planOf(db, sql).filter((step) => /TEMP B-TREE|SCAN/.test(step)), [], sql);
    db.close();
  });
});
