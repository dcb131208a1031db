import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import Database from "better-sqlite3";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import { normalizeSpecs } from "../../../adapters/storage/sqlite/schema.ts";
import { findQueries } from "../../../adapters/storage/sqlite/where-sql.ts";
import { UniqueConstraintError, type CollectionSpec, type Doc } from "../../../src/ports/storage.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";

interface Person extends Doc {
  email?: string;
  team?: string;
  age?: number;
}

const SPECS: CollectionSpec[] = [
  {
    name: "people",
    indexes: [{ fields: ["email"], unique: true }, { fields: ["team", "age"] }],
  },
];

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Two storages (two SQLite connections) on one new file, as a CLI command beside the server has. */
async function twoHandlesOnOneFile() {
  const filename = newFile();
  const a = sqliteStorage({ filename });
  const b = sqliteStorage({ filename });
  await a.ensureCollections(SPECS);
  await b.ensureCollections(SPECS);
  return { a, b, peopleA: a.collection<Person>("people"), peopleB: b.collection<Person>("people") };
}

const directory = temporaryDirectory("sqlite");
let files = 0;
const newFile = () => join(directory, `db-${++files}.sqlite`);

/** Opens the file with a plain better-sqlite3 connection, outside the adapter. */
function inspect<R>(filename: string, read: (db: Database.Database) => R): R {
  const db = new Database(filename, { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

function indexNames(db: Database.Database, table: string): string[] {
  return db
    .prepare(
      `SELECT name FROM sqlite_master
       WHERE type = 'index' AND tbl_name = ? AND name NOT LIKE 'sqlite_%' ORDER BY name`,
    )
    .pluck()
    .all(table) as string[];
}

describe("sqliteStorage", () => {
  it("puts a file database in WAL mode", async () => {
    const filename = newFile();
    const storage = sqliteStorage({ filename });
    await storage.ensureCollections(SPECS);
    await storage.collection<Person>("people").insert({ id: "a" });
    // WAL is recorded in the file, so a second connection reports it.
    assert.equal(inspect(filename, (db) => db.pragma("journal_mode", { simple: true })), "wal");
    await storage.close();
  });

  it("keeps data and indexes across close and reopen", async () => {
    const filename = newFile();
    const first = sqliteStorage({ filename });
    await first.ensureCollections(SPECS);
    await first.collection<Person>("people").upsertMany([
      { id: "a", email: "ann@example.com", team: "red", age: 30 },
      { id: "b", email: "bob@example.com", team: "blue" },
    ]);
    await first.close();

    const second = sqliteStorage({ filename });
    await second.ensureCollections(SPECS);
    const people = second.collection<Person>("people");
    assert.deepEqual(await people.get("a"), { id: "a", email: "ann@example.com", team: "red", age: 30 });
    assert.equal(await people.count(), 2);
    await assert.rejects(people.insert({ id: "c", email: "ann@example.com" }), UniqueConstraintError);
    await second.close();
    assert.deepEqual(
      inspect(filename, (db) => indexNames(db, "people")),
      ["ix_people__team__age", "ux_people__email"],
    );
  });

  it("ensureCollections is idempotent and drops indexes no longer declared", async () => {
    const filename = newFile();
    const first = sqliteStorage({ filename });
    await first.ensureCollections(SPECS);
    await first.ensureCollections(SPECS);
    await first.close();
    assert.deepEqual(
      inspect(filename, (db) => indexNames(db, "people")),
      ["ix_people__team__age", "ux_people__email"],
    );

    const second = sqliteStorage({ filename });
    const reduced: CollectionSpec[] = [{ name: "people", indexes: [{ fields: ["email"], unique: true }] }];
    await second.ensureCollections(reduced);
    await second.ensureCollections(reduced);
    await second.close();
    inspect(filename, (db) => {
      assert.deepEqual(indexNames(db, "people"), ["ux_people__email"]);
      const ledger = db.prepare(`SELECT collection, spec FROM _reachkit_schema`).all() as {
        collection: string;
        spec: string;
      }[];
      assert.deepEqual(ledger.map((row) => row.collection), ["people"]);
      assert.deepEqual(JSON.parse(ledger[0].spec).indexes, [{ fields: ["email"], unique: true }]);
    });
  });

  it("leaves indexes it did not create alone", async () => {
    const filename = newFile();
    const first = sqliteStorage({ filename });
    await first.ensureCollections(SPECS);
    await first.close();
    const raw = new Database(filename);
    raw.exec(`CREATE INDEX "custom_people_name" ON "people" (json_extract(doc, '$.name'))`);
    raw.close();

    const second = sqliteStorage({ filename });
    await second.ensureCollections([{ name: "people" }]);
    await second.close();
    assert.deepEqual(inspect(filename, (db) => indexNames(db, "people")), ["custom_people_name"]);
  });

  it("two handles on one file see each other's committed writes", async () => {
    const { a, b, peopleA, peopleB } = await twoHandlesOnOneFile();

    await peopleA.insert({ id: "from-a", email: "a@example.com" });
    assert.deepEqual(await peopleB.get("from-a"), { id: "from-a", email: "a@example.com" });
    await peopleB.update("from-a", { team: "red" });
    assert.deepEqual(await peopleA.get("from-a"), { id: "from-a", email: "a@example.com", team: "red" });

    // Uncommitted writes stay invisible to the other handle until commit.
    await a.transaction(async () => {
      await peopleA.insert({ id: "pending" });
      assert.equal(await peopleB.get("pending"), undefined);
    });
    // b read inside a's transaction, so its reads of this turn share that older snapshot (see the read batch test).
    await nextTurn();
    assert.deepEqual(await peopleB.get("pending"), { id: "pending" });

    // A unique index enforced through one handle holds for the other.
    await assert.rejects(peopleB.insert({ id: "dup", email: "a@example.com" }), UniqueConstraintError);
    await a.close();
    await b.close();
  });

  it("reads of one event-loop turn share a snapshot: own writes show at once, another handle's from the next turn", async () => {
    const { a, b, peopleA, peopleB } = await twoHandlesOnOneFile();
    await peopleA.insert({ id: "ann", team: "red" });
    await nextTurn();

    assert.deepEqual(await peopleB.get("ann"), { id: "ann", team: "red" });
    await peopleA.update("ann", { team: "blue" });
    // a sees its own write at once: a write ends the handle's read batch.
    assert.deepEqual(await peopleA.get("ann"), { id: "ann", team: "blue" });
    assert.equal((await peopleB.find({ where: { team: "red" } })).items.length, 1, "b's turn still reads its snapshot");
    // b's batch holds no lock a waits for (WAL readers never block the writer).
    await peopleA.insert({ id: "bob", team: "blue" });
    await nextTurn();
    assert.deepEqual(await peopleB.get("ann"), { id: "ann", team: "blue" });
    assert.equal(await peopleB.count({ team: "blue" }), 2);
    // A transaction through b starts from the newest data even when b read earlier in the turn.
    await peopleA.update("bob", { team: "green" });
    assert.equal(await b.transaction(() => peopleB.count({ team: "green" })), 1);
    await a.close();
    await b.close();
  });

  it("queries read the columns the indexes are built on, so SQLite uses them", async () => {
    const filename = newFile();
    const storage = sqliteStorage({ filename });
    await storage.ensureCollections(SPECS);
    await storage.collection<Person>("people").insert({ id: "a", email: "ann@example.com", team: "red", age: 3 });
    await storage.close();

    const [people] = normalizeSpecs(SPECS);
    const plans = (options: Parameters<typeof findQueries>[1], fetch?: number) =>
      inspect(filename, (db) =>
        findQueries(people, options, fetch).map((query) => {
          const rows = db.prepare(`EXPLAIN QUERY PLAN ${query.sql}`).all(...query.params) as { detail: string }[];
          return rows.map((row) => row.detail).join("\n");
        }),
      );
    const plan = (options: Parameters<typeof findQueries>[1]) => plans(options)[0];
    const cursor = (values: unknown[]) => Buffer.from(JSON.stringify(values)).toString("base64url");

    assert.match(plan({ where: { email: "ann@example.com" } }), /USING INDEX ux_people__email/);
    assert.match(plan({ where: { team: "red", age: { gt: 1 } } }), /USING INDEX ix_people__team__age/);
    assert.match(plan({ where: { id: "a" } }), /USING PRIMARY KEY/);
    // Continuing a page ordered by id is a primary-key range scan.
    assert.match(plan({ after: cursor(["a"]) }), /SEARCH people USING PRIMARY KEY \(id>\?\)/);
    // Continuing a descending page: every segment is an index range, none a scan.
    const segments = plans(
      { where: { team: "red" }, orderBy: [{ field: "age", direction: "desc" }], after: cursor([3, "a"]) },
      11,
    );
    assert.equal(segments.length, 3);
    assert.match(segments[0], /USING INDEX ix_people__team__age \(f_team=\? AND f_age=\?/);
    assert.match(segments[1], /USING INDEX ix_people__team__age \(f_team=\? AND f_age<\?\)/);
    assert.match(segments[2], /USING INDEX ix_people__team__age \(f_team=\? AND f_age=\?/);
  });

  it("keeps apart query shapes that differ only in their operands, also past the SQL cache's size", async () => {
    const storage = sqliteStorage({ filename: newFile() });
    await storage.ensureCollections(SPECS);
    const people = storage.collection<Person>("people");
    await people.insert({ id: "5", team: "red", age: 3, email: "five@example.com" });
    await people.insert({ id: "b", team: "red" });
    const ids = async (where: Parameters<typeof people.find>[0]) => (await people.find(where)).items.map((person) => person.id);

    // The same fields and operators with a text, number, null or absent operand, or another sort: each its own SQL.
    assert.deepEqual(await ids({ where: { id: "5" } }), ["5"]);
    assert.deepEqual(await ids({ where: { team: "red", age: 3 } }), ["5"]);
    assert.deepEqual(await ids({ where: { team: "red", age: null } }), ["b"]);
    assert.deepEqual(await ids({ where: { team: "red", email: "five@example.com" } }), ["5"]);
    assert.deepEqual(await ids({ where: { team: "red", email: null } }), ["b"]);
    assert.deepEqual(await ids({ where: { team: "red", age: { exists: false } } }), ["b"]);
    assert.deepEqual(await ids({ where: { team: "red", age: { exists: true } } }), ["5"]);
    assert.deepEqual(await ids({ where: { team: "red" }, orderBy: [{ field: "id", direction: "desc" }] }), ["b", "5"]);
    assert.deepEqual(await ids({ where: { team: "red" }, orderBy: [{ field: "id" }] }), ["5", "b"]);
    // 1,100 list lengths: more shapes than the cache keeps, so it is emptied on the way.
    for (let length = 1; length <= 1_100; length++) {
      const list = Array.from({ length }, (_, i) => (i === length - 1 ? "b" : `missing-${i}`));
      assert.deepEqual(await ids({ where: { id: { in: list } } }), ["b"], `a list of ${length}`);
      assert.equal(await people.count({ id: { in: list }, team: "red" }), 1);
    }
    await storage.close();
  });

  it("bulk upsertMany spans several chunks and stays atomic", async () => {
    const storage = sqliteStorage({ filename: newFile() });
    await storage.ensureCollections(SPECS);
    const people = storage.collection<Person>("people");
    const docs: Person[] = Array.from({ length: 12_345 }, (_, i) => ({ id: `p${i}`, email: `p${i}@example.com` }));
    await assert.rejects(
      people.upsertMany([...docs, { id: "last", email: "p0@example.com" }]),
      (error) => error instanceof UniqueConstraintError && error.fields[0] === "email",
    );
    assert.equal(await people.count(), 0);
    await people.upsertMany(docs);
    assert.equal(await people.count(), 12_345);
    await storage.close();
  });
});

describe("sqliteStorage with many rows", () => {
  it("finds 200,000 documents in one call", async () => {
    const storage = sqliteStorage({ filename: ":memory:" });
    await storage.ensureCollections([{ name: "many" }]);
    const many = storage.collection<{ id: string; n: number }>("many");
    await many.upsertMany(Array.from({ length: 200_000 }, (_, n) => ({ id: `d${String(n).padStart(6, "0")}`, n })));
    const page = await many.find();
    assert.equal(page.items.length, 200_000);
    assert.equal(page.items[199_999]!.n, 199_999);
    await storage.close();
  });
});
