import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import Database from "better-sqlite3";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import { JsonText, UniqueConstraintError, type Doc, type WithJsonText } from "../../../src/ports/storage.ts";
import { watchStatements } from "../../support/sqlite-statements.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";

interface Thing extends Doc {
  v?: unknown;
  group?: string;
}

interface Person extends Doc {
  email?: string | null;
  team?: string;
  age?: number | boolean;
}

interface Task extends Doc {
  status: string;
  runAt: number;
  owner: string;
  key?: string;
  note?: string;
}

/** For each UPDATE statement run during `work`, the index entries it writes (IdxInsert in its program). */
async function indexEntriesWritten(work: () => Promise<void>): Promise<number[]> {
  const written: number[] = [];
  // An update runs with `get` when it answers the row it wrote (UPDATE … RETURNING).
  await watchStatements(work, (statement, args) => {
    if (statement.source.startsWith("UPDATE")) {
      written.push(statement.database.prepare(`EXPLAIN ${statement.source}`).all(...args).filter((op) => (op as { opcode: string }).opcode === "IdxInsert").length);
    }
  });
  return written;
}

const directory = temporaryDirectory("sqlite-columns");
let files = 0;
const newFile = () => join(directory, `db-${++files}.sqlite`);

/** A spread of values as a document field; each must land in the column exactly as json_extract reads it. */
const VALUES: unknown[] = [
  "",
  "plain",
  "\u00e9\u2603\u{1F600}",
  "\ud800 lone surrogate",
  "nul \u0000 inside",
  "5",
  0,
  -0,
  1,
  -1,
  1.5,
  -2.25,
  1e-7,
  123456789012,
  2 ** 53,
  -(2 ** 53),
  2 ** 62,
  2 ** 63,
  -(2 ** 63),
  1e21,
  -1e300,
  Number.MAX_VALUE,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  true,
  false,
  null,
  undefined,
  { a: 1, b: [1, "x", null, { c: true }], d: "\u00e9" },
  [1, 2.5, "three"],
  [],
  {},
  new Date(0),
  () => "a function",
];

/** Fields given as JSON text (upsertMany's JsonText): the column holds the value the text spells. */
const TEXTS = ['{ "a" : 1.0,  "b":"\\u00e9" }', "1.0", "42", " -7 ", '"x"', '"\\ud83d\\ude00"', "true", "false", "null", "[1, 2]", "1e2"];

/** Rows whose column differs from json_extract(doc, '$.v') in value or type: none, whatever wrote them. */
function mismatches(filename: string, table: string): unknown[] {
  const db = new Database(filename, { readonly: true });
  try {
    return db
      .prepare(
        `SELECT id, typeof(f_v) AS columnType, typeof(json_extract(doc, '$.v')) AS jsonType FROM "${table}"
         WHERE NOT (f_v IS json_extract(doc, '$.v') AND typeof(f_v) = typeof(json_extract(doc, '$.v')))`,
      )
      .all();
  } finally {
    db.close();
  }
}

describe("sqliteStorage: indexed fields in columns", () => {
  it("every write path stores exactly what json_extract reads, for values of every kind", async () => {
    const filename = newFile();
    const storage = sqliteStorage({ filename });
    await storage.ensureCollections([{ name: "things", indexes: [{ fields: ["v"] }] }]);
    const things = storage.collection<Thing>("things");
    for (const [i, v] of VALUES.entries()) {
      await things.insert({ id: `insert-${i}`, v });
      await things.upsert({ id: `upsert-${i}`, v });
      await things.insert({ id: `update-${i}`, v: "before" });
      await things.update(`update-${i}`, { v });
      await things.insert({ id: `where-${i}`, v: "before", group: `g${i}` });
      assert.equal(await things.updateWhere({ group: `g${i}` }, { v }), 1);
    }
    // Past 200 rows: upsertMany's multi-row statement, and its single-row tail.
    const many: WithJsonText<Thing>[] = [];
    for (let copy = 0; copy < 8; copy++) {
      for (const [i, v] of VALUES.entries()) many.push({ id: `many-${copy}-${i}`, v });
      for (const [i, text] of TEXTS.entries()) many.push({ id: `text-${copy}-${i}`, v: new JsonText(text) });
    }
    await things.upsertMany(many);
    await things.upsertMany(many.slice(0, 7));
    await storage.close();

    assert.equal(VALUES.length * 5 + many.length > 300, true);
    assert.deepEqual(mismatches(filename, "things"), []);
    const db = new Database(filename, { readonly: true });
    const types = db.prepare(`SELECT DISTINCT typeof(f_v) FROM things ORDER BY 1`).pluck().all();
    db.close();
    assert.deepEqual(types, ["integer", "null", "real", "text"], "the spread covers every type json_extract returns");
  });

  it("upgrades a database of the expression-index layout: columns filled, indexes rebuilt, answers unchanged", async () => {
    const filename = newFile();
    const old = new Database(filename);
    // Schema version 1 as it was written: no columns, indexes on json_extract, the ledger at version 1.
    old.exec(`
      CREATE TABLE "_reachkit_schema" (collection TEXT PRIMARY KEY NOT NULL, spec TEXT NOT NULL, updated_at INTEGER NOT NULL);
      CREATE TABLE "people" (id TEXT PRIMARY KEY NOT NULL, doc TEXT NOT NULL) WITHOUT ROWID;
      CREATE UNIQUE INDEX "ux_people__email" ON "people" (json_extract(doc, '$.email'));
      CREATE INDEX "ix_people__team__age" ON "people" (json_extract(doc, '$.team'), json_extract(doc, '$.age'));
      INSERT INTO "_reachkit_schema" VALUES ('people', '{"version":1,"indexes":[{"fields":["email"],"unique":true},{"fields":["team","age"],"unique":false}]}', 1);
    `);
    const insert = old.prepare(`INSERT INTO people (id, doc) VALUES (?, ?)`);
    const people: Person[] = [
      { id: "a", email: "ann@example.com", team: "red", age: 30 },
      { id: "b", email: "bob@example.com", team: "blue", age: 2.5 },
      { id: "c", team: "red" },
      { id: "d", email: null, team: "red", age: true },
      { id: "e", email: "\u00e9@example.com", team: "blue", age: 10 },
    ];
    for (const person of people) insert.run(person.id, JSON.stringify(person));
    old.close();

    const storage = sqliteStorage({ filename });
    const specs = [{ name: "people", indexes: [{ fields: ["email"], unique: true }, { fields: ["team", "age"] }] }];
    await storage.ensureCollections(specs);
    const collection = storage.collection<Person>("people");
    const ids = async (options: Parameters<typeof collection.find>[0]) => (await collection.find(options)).items.map((p) => p.id);
    assert.deepEqual(await ids({ where: { team: "red" }, orderBy: [{ field: "age", direction: "desc" }] }), ["a", "d", "c"]);
    assert.deepEqual(await ids({ where: { email: "bob@example.com" } }), ["b"]);
    assert.deepEqual(await ids({ where: { age: { gte: 1, lt: 20 } } }), ["b", "d", "e"]);
    assert.deepEqual(await ids({ orderBy: [{ field: "email" }] }), ["c", "d", "a", "b", "e"]);
    const error = await collection.insert({ id: "x", email: "ann@example.com", team: "red" }).catch((e: unknown) => e);
    assert.ok(error instanceof UniqueConstraintError);
    assert.deepEqual(error.fields, ["email"]);
    // New writes keep the columns right.
    await collection.upsert({ id: "f", email: "fay@example.com", team: "green", age: 4 });
    await collection.update("a", { age: 31 });
    assert.deepEqual(await ids({ where: { team: "green", age: 4 } }), ["f"]);
    assert.deepEqual(await ids({ where: { team: "red", age: 31 } }), ["a"]);
    await storage.close();

    const db = new Database(filename, { readonly: true });
    try {
      const indexSql = db.prepare(`SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'people' AND sql IS NOT NULL ORDER BY name`).pluck().all();
      assert.deepEqual(indexSql, [
        `CREATE INDEX "ix_people__team__age" ON "people" ("f_team", "f_age")`,
        `CREATE UNIQUE INDEX "ux_people__email" ON "people" ("f_email")`,
      ]);
      for (const field of ["email", "team", "age"]) {
        const wrong = db.prepare(`SELECT count(*) FROM people WHERE NOT ("f_${field}" IS json_extract(doc, '$.${field}') AND typeof("f_${field}") = typeof(json_extract(doc, '$.${field}')))`).pluck().get();
        assert.equal(wrong, 0, field);
      }
      const ledger = JSON.parse(db.prepare(`SELECT spec FROM _reachkit_schema WHERE collection = 'people'`).pluck().get() as string);
      assert.equal(ledger.version, 2);
    } finally {
      db.close();
    }
  });

  it("an index dropped and declared again refills its column from the documents", async () => {
    const filename = newFile();
    const storage = sqliteStorage({ filename });
    await storage.ensureCollections([{ name: "things", indexes: [{ fields: ["v"] }] }]);
    const things = storage.collection<Doc & { v?: number }>("things");
    await things.insert({ id: "a", v: 1 });
    // Without the index the column is no longer written...
    await storage.ensureCollections([{ name: "things" }]);
    await things.update("a", { v: 2 });
    await things.insert({ id: "b", v: 3 });
    // ...so declaring it again fills it before trusting it.
    await storage.ensureCollections([{ name: "things", indexes: [{ fields: ["v"] }] }]);
    assert.deepEqual((await things.find({ where: { v: 2 } })).items, [{ id: "a", v: 2 }]);
    assert.deepEqual((await things.find({ where: { v: { gt: 1 } } })).items.map((t) => t.id), ["a", "b"]);
    await storage.close();
    assert.deepEqual(mismatches(filename, "things"), []);
  });

  it("an update rewrites the index entries of the indexed fields its patch names, and no other", async () => {
    const storage = sqliteStorage({ filename: newFile() });
    await storage.ensureCollections([{ name: "tasks", indexes: [{ fields: ["status", "runAt"] }, { fields: ["owner"] }, { fields: ["key"], unique: true }] }]);
    const tasks = storage.collection<Task>("tasks");
    await tasks.insert({ id: "t1", status: "queued", runAt: 5, owner: "ann", key: "k1", note: "first" });
    await tasks.insert({ id: "t2", status: "queued", runAt: 6, owner: "bob", key: "k2" });
    const written = await indexEntriesWritten(async () => {
      await tasks.update("t1", { note: "second" });
      await tasks.update("t1", { status: "running", owner: "ann" }, { where: { status: "queued" } });
      await tasks.updateWhere({ owner: "bob" }, { key: undefined, note: "moved" });
    });
    // The row itself (WITHOUT ROWID: an entry of the primary key's tree), then one entry per index of a field the patch
    // names (the patch is applied in SQL, without reading the row: `owner: "ann"` costs its entry though unchanged).
    assert.deepEqual(written, [1, 3, 2]);
    assert.deepEqual((await tasks.find({ where: { status: "running" } })).items.map((task) => [task.id, task.note]), [["t1", "second"]]);
    assert.deepEqual((await tasks.find({ where: { status: "queued", runAt: { lte: 10 } } })).items.map((task) => task.id), ["t2"]);
    assert.equal((await tasks.findOne({ key: "k2" }))?.id, undefined);
    assert.equal((await tasks.findOne({ owner: "ann" }))?.id, "t1");
    await tasks.insert({ id: "t3", status: "queued", runAt: 7, owner: "cy", key: "k2" });
    await assert.rejects(tasks.update("t3", { key: "k1" }), UniqueConstraintError);
    await storage.close();
  });

  it("refuses indexed fields whose column names differ only by case", async () => {
    const storage = sqliteStorage({ filename: ":memory:" });
    await assert.rejects(
      storage.ensureCollections([{ name: "things", indexes: [{ fields: ["Email", "team"] }, { fields: ["email"] }] }]),
      /indexed fields Email and email differ only by case/,
    );
    await storage.close();
  });
});
