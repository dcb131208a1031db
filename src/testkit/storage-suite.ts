import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  UniqueConstraintError,
  type Collection,
  type CollectionSpec,
  type Doc,
  type FindOptions,
  type Storage,
  type Where,
} from "../ports/storage.ts";

/**
 * The behaviour every Storage adapter must share, written against the port
 * only. An adapter author calls it from a test file:
 *
 *     storageConformance("postgres", () => postgresStorage({ url }));
 *
 * Each test gets a fresh storage from `makeStorage` and closes it afterwards,
 * so `makeStorage` must return an empty store every time.
 *
 * Where the port leaves a choice open, this suite pins down the reference
 * behaviour (the SQLite adapter's): values compare the way SQLite compares
 * `json_extract` results (NULL < numbers, booleans as 1/0 < text by code
 * point), and a nested transaction that throws undoes only its own writes.
 */
export function storageConformance(adapterName: string, makeStorage: () => Promise<Storage> | Storage): void {
  async function withStorage(body: (storage: Storage) => Promise<void>): Promise<void> {
    const storage = await makeStorage();
    try {
      await storage.ensureCollections(SPECS);
      await body(storage);
    } finally {
      await storage.close();
    }
  }

  describe(`Storage conformance: ${adapterName}`, () => {
    describe("collections", () => {
      // Services take handles in their constructors, before the kit declares
      // every plugin's collections: declaration is checked per operation.
      it("rejects operations, naming it, on a handle of a collection not declared yet", () =>
        withStorage(async (storage) => {
          const later = storage.collection<Person>("nowhere_to_be_found");
          const undeclared = /nowhere_to_be_found/;
          await assert.rejects(() => later.get("a"), undeclared);
          await assert.rejects(() => later.insert({ id: "a" }), undeclared);
          await assert.rejects(() => later.upsert({ id: "a" }), undeclared);
          await assert.rejects(() => later.upsertMany([{ id: "a" }]), undeclared);
          await assert.rejects(() => later.update("a", { name: "Ann" }), undeclared);
          await assert.rejects(() => later.updateWhere({}, { name: "Ann" }), undeclared);
          await assert.rejects(() => later.delete("a"), undeclared);
          await assert.rejects(() => later.deleteWhere({}), undeclared);
          await assert.rejects(() => later.find(), undeclared);
          await assert.rejects(() => later.findOne({}), undeclared);
          await assert.rejects(() => later.count(), undeclared);
          await assert.rejects(() => storage.transaction(() => later.insert({ id: "a" })), undeclared);
        }));

      it("serves a handle taken before ensureCollections once it has run", () =>
        withStorage(async (storage) => {
          const later = storage.collection<Person>("declared_later");
          await assert.rejects(() => later.count(), /declared_later/);
          await storage.ensureCollections([{ name: "declared_later", indexes: [{ fields: ["name"], unique: true }] }]);
          await later.insert({ id: "a", name: "Ann" });
          assert.deepEqual(await later.get("a"), { id: "a", name: "Ann" });
          assert.equal(await later.count(), 1);
          assertUnique(await rejection(later.insert({ id: "b", name: "Ann" })), "declared_later", ["name"]);
        }));

      it("rejects invalid collection names", () =>
        withStorage(async (storage) => {
          await assert.rejects(storage.ensureCollections([{ name: "Bad-Name" }]));
          await assert.rejects(storage.ensureCollections([{ name: "1st" }]));
          assert.throws(() => storage.collection("Bad-Name"));
        }));

      it("is idempotent and lets later calls add collections and indexes", () =>
        withStorage(async (storage) => {
          const people = storage.collection<Person>("people");
          await people.insert({ id: "a", name: "Ann", email: "ann@example.com" });
          await storage.ensureCollections(SPECS);
          await storage.ensureCollections([{ name: "extras" }]);
          assert.deepEqual(await people.get("a"), { id: "a", name: "Ann", email: "ann@example.com" });
          await storage.collection<Doc>("extras").insert({ id: "x" });

          await storage.ensureCollections([
            { name: "people", indexes: [...PEOPLE_INDEXES, { fields: ["name"], unique: true }] },
          ]);
          const error = await rejection(people.insert({ id: "b", name: "Ann" }));
          assertUnique(error, "people", ["name"]);
        }));

      it("drops an index that is no longer declared", () =>
        withStorage(async (storage) => {
          const people = storage.collection<Person>("people");
          await people.insert({ id: "a", email: "same@example.com" });
          await storage.ensureCollections([{ name: "people", indexes: [{ fields: ["team", "age"] }] }]);
          await people.insert({ id: "b", email: "same@example.com" });
          assert.equal(await people.count({ email: "same@example.com" }), 2);
        }));

      it("refuses to add a unique index that existing documents violate", () =>
        withStorage(async (storage) => {
          const people = storage.collection<Person>("people");
          await people.insert({ id: "a", name: "Twin" });
          await people.insert({ id: "b", name: "Twin" });
          const error = await rejection(
            storage.ensureCollections([{ name: "people", indexes: [{ fields: ["name"], unique: true }] }]),
          );
          assertUnique(error, "people", ["name"]);
        }));
    });

    describe("documents", () => {
      it("inserts, gets, upserts and deletes", () =>
        withStorage(async (storage) => {
          const people = storage.collection<Person>("people");
          assert.deepEqual(await people.insert({ id: "a", name: "Ann", age: 30 }), { id: "a", name: "Ann", age: 30 });
          assert.deepEqual(await people.get("a"), { id: "a", name: "Ann", age: 30 });
          assert.equal(await people.get("missing"), undefined);

          // upsert replaces the whole document: `age` is gone.
          assert.deepEqual(await people.upsert({ id: "a", name: "Annie" }), { id: "a", name: "Annie" });
          assert.deepEqual(await people.get("a"), { id: "a", name: "Annie" });
          await people.upsert({ id: "b", name: "Bob" });
          assert.deepEqual(await people.get("b"), { id: "b", name: "Bob" });

          assert.equal(await people.delete("a"), true);
          assert.equal(await people.delete("a"), false);
          assert.equal(await people.get("a"), undefined);
          assert.equal(await people.count(), 1);
        }));

      it("stores copies: later mutations of inserted or returned objects change nothing", () =>
        withStorage(async (storage) => {
          const people = storage.collection<Person>("people");
          const original: Person = { id: "a", tags: ["x"], address: { city: "Oslo" } };
          const returned = await people.insert(original);
          original.tags?.push("from-original");
          original.address!.city = "changed";
          returned.tags?.push("from-returned");

          const fetched = await people.get("a");
          assert.deepEqual(fetched, { id: "a", tags: ["x"], address: { city: "Oslo" } });
          fetched!.tags?.push("from-get");
          const [found] = (await people.find()).items;
          found.tags?.push("from-find");
          const updated = await people.update("a", { name: "Ann" });
          updated!.tags?.push("from-update");

          assert.deepEqual(await people.get("a"), { id: "a", name: "Ann", tags: ["x"], address: { city: "Oslo" } });
        }));

      it("stores documents as JSON: undefined fields are not kept", () =>
        withStorage(async (storage) => {
          const people = storage.collection<Person>("people");
          await people.insert({ id: "a", name: undefined, age: 1 });
          const stored = await people.get("a");
          assert.deepEqual(stored, { id: "a", age: 1 });
          assert.equal(Object.hasOwn(stored!, "name"), false);
        }));
    });

    describe("unique constraints", () => {
      it("rejects a duplicate id with UniqueConstraintError on ['id']", () =>
        withStorage(async (storage) => {
          const people = storage.collection<Person>("people");
          await people.insert({ id: "a", name: "Ann" });
          assertUnique(await rejection(people.insert({ id: "a", name: "Other" })), "people", ["id"]);
          assert.deepEqual(await people.get("a"), { id: "a", name: "Ann" });
        }));

      it("rejects a unique index violation with the index fields", () =>
        withStorage(async (storage) => {
          const people = storage.collection<Person>("people");
          await people.insert({ id: "a", email: "ann@example.com" });
          assertUnique(await rejection(people.insert({ id: "b", email: "ann@example.com" })), "people", ["email"]);
          assert.equal(await people.get("b"), undefined);

          const pairs = storage.collection<Pair>("pairs");
          await pairs.insert({ id: "p1", a: 1, b: "x" });
          await pairs.insert({ id: "p2", a: 1, b: "y" });
          assertUnique(await rejection(pairs.insert({ id: "p3", a: 1, b: "x" })), "pairs", ["a", "b"]);
        }));

      it("ignores documents where a unique field is missing or null", () =>
        withStorage(async (storage) => {
          const people = storage.collection<Person>("people");
          await people.insert({ id: "a" });
          await people.insert({ id: "b" });
          await people.insert({ id: "c", email: null });
          await people.insert({ id: "d", email: null });
          const pairs = storage.collection<Pair>("pairs");
          await pairs.insert({ id: "p1", a: 1 });
          await pairs.insert({ id: "p2", a: 1 });
          await pairs.insert({ id: "p3", a: 1, b: null });
          assert.equal(await people.count(), 4);
          assert.equal(await pairs.count(), 3);
        }));

      it("frees a unique value when its document changes or goes", () =>
        withStorage(async (storage) => {
          const people = storage.collection<Person>("people");
          await people.insert({ id: "a", email: "one@example.com" });
          await people.upsert({ id: "a", email: "two@example.com" });
          await people.insert({ id: "b", email: "one@example.com" });
          await people.update("b", { email: "three@example.com" });
          await people.delete("a");
          await people.insert({ id: "c", email: "one@example.com" });
          await people.insert({ id: "d", email: "two@example.com" });
          assert.equal(await people.count(), 3);
        }));

      it("rejects upserts and updates that take another document's unique value", () =>
        withStorage(async (storage) => {
          const people = storage.collection<Person>("people");
          await people.insert({ id: "a", email: "ann@example.com" });
          await people.insert({ id: "b", email: "bob@example.com", name: "Bob" });
          assertUnique(await rejection(people.upsert({ id: "b", email: "ann@example.com" })), "people", ["email"]);
          assertUnique(await rejection(people.update("b", { email: "ann@example.com" })), "people", ["email"]);
          assertUnique(
            await rejection(people.updateWhere({ id: "b" }, { email: "ann@example.com" })),
            "people",
            ["email"],
          );
          assert.deepEqual(await people.get("b"), { id: "b", email: "bob@example.com", name: "Bob" });
        }));

      it("upsertMany is atomic: one violation and nothing is written", () =>
        withStorage(async (storage) => {
          const people = storage.collection<Person>("people");
          await people.insert({ id: "a", email: "ann@example.com", name: "Ann" });

          // Conflict with a stored document.
          const fromStored = await rejection(
            people.upsertMany([
              { id: "n1", email: "n1@example.com" },
              { id: "a", email: "ann@example.com", name: "Changed" },
              { id: "n2", email: "ann@example.com" },
            ]),
          );
          assertUnique(fromStored, "people", ["email"]);

          // Conflict inside the batch itself.
          const withinBatch = await rejection(
            people.upsertMany([
              { id: "n3", email: "dup@example.com" },
              { id: "n4", email: "dup@example.com" },
            ]),
          );
          assertUnique(withinBatch, "people", ["email"]);

          assert.deepEqual(await ids(people.find()), ["a"]);
          assert.deepEqual(await people.get("a"), { id: "a", email: "ann@example.com", name: "Ann" });

          await people.upsertMany([
            { id: "a", name: "Ann 2" },
            { id: "b", name: "Bob" },
          ]);
          assert.deepEqual(await people.get("a"), { id: "a", name: "Ann 2" });
          assert.equal(await people.count(), 2);
        }));
    });

    describe("where", () => {
      const where = async (storage: Storage, condition: Where<Person>) =>
        ids(storage.collection<Person>("people").find({ where: condition }));

      async function seeded(body: (storage: Storage) => Promise<void>): Promise<void> {
        await withStorage(async (storage) => {
          await storage.collection<Person>("people").upsertMany(WHERE_PEOPLE);
          await body(storage);
        });
      }

      it("matches bare values by equality, without type coercion", () =>
        seeded(async (storage) => {
          assert.deepEqual(await where(storage, { team: "red" }), ["a", "c"]);
          assert.deepEqual(await where(storage, { age: 30 }), ["a"]);
          assert.deepEqual(await where(storage, { age: 30, team: "blue" }), []);
          assert.deepEqual(await where(storage, { age: "30" } as unknown as Where<Person>), []);
          assert.deepEqual(await where(storage, { id: "d" }), ["d"]);
        }));

      it("matches null (bare or eq) on absent and null fields", () =>
        seeded(async (storage) => {
          assert.deepEqual(await where(storage, { age: null }), ["b", "c"]);
          assert.deepEqual(await where(storage, { age: { eq: null } }), ["b", "c"]);
          assert.deepEqual(await where(storage, { age: { eq: 20 } }), ["e"]);
        }));

      it("ne includes absent and null fields; ne null means present", () =>
        seeded(async (storage) => {
          assert.deepEqual(await where(storage, { age: { ne: 30 } }), ["b", "c", "d", "e"]);
          assert.deepEqual(await where(storage, { age: { ne: null } }), ["a", "d", "e"]);
        }));

      it("in matches any listed value; an empty list matches nothing", () =>
        seeded(async (storage) => {
          assert.deepEqual(await where(storage, { team: { in: ["red", "green"] } }), ["a", "c", "d"]);
          assert.deepEqual(await where(storage, { age: { in: [10, 30, 99] } }), ["a", "d"]);
          assert.deepEqual(await where(storage, { team: { in: [] } }), []);
          assert.equal(await storage.collection<Person>("people").count({ team: { in: [] } }), 0);
        }));

      it("ranges never match absent or null fields", () =>
        seeded(async (storage) => {
          assert.deepEqual(await where(storage, { age: { gt: 10 } }), ["a", "e"]);
          assert.deepEqual(await where(storage, { age: { gte: 20 } }), ["a", "e"]);
          assert.deepEqual(await where(storage, { age: { lt: 30 } }), ["d", "e"]);
          assert.deepEqual(await where(storage, { age: { lte: 10 } }), ["d"]);
          assert.deepEqual(await where(storage, { age: { lt: 1000 } }), ["a", "d", "e"]);
          assert.deepEqual(await where(storage, { name: { gte: "B", lt: "D" } }), ["b", "c"]);
        }));

      it("ANDs several operators and several fields", () =>
        seeded(async (storage) => {
          assert.deepEqual(await where(storage, { age: { gte: 10, lt: 30 } }), ["d", "e"]);
          assert.deepEqual(await where(storage, { age: { gte: 10, ne: 20 } }), ["a", "d"]);
          assert.deepEqual(await where(storage, { team: "red", age: { exists: true } }), ["a"]);
          assert.deepEqual(await where(storage, { team: { in: ["red", "blue"] }, active: false }), ["b", "e"]);
        }));

      it("exists: true is present and not null, false is absent or null", () =>
        seeded(async (storage) => {
          assert.deepEqual(await where(storage, { email: { exists: true } }), ["a"]);
          assert.deepEqual(await where(storage, { email: { exists: false } }), ["b", "c", "d", "e"]);
        }));

      it("compares booleans as 1 / 0", () =>
        seeded(async (storage) => {
          assert.deepEqual(await where(storage, { active: true }), ["a", "d"]);
          assert.deepEqual(await where(storage, { active: false }), ["b", "e"]);
          assert.deepEqual(await where(storage, { active: { ne: true } }), ["b", "c", "e"]);
          assert.deepEqual(await where(storage, { active: { in: [true] } }), ["a", "d"]);
          assert.deepEqual(await where(storage, { active: 1 } as unknown as Where<Person>), ["a", "d"]);
        }));

      it("rejects unknown operators and invalid field names", () =>
        seeded(async (storage) => {
          const people = storage.collection<Person>("people");
          await assert.rejects(people.find({ where: { age: { near: 3 } } as unknown as Where<Person> }));
          await assert.rejects(people.count({ "bad field": 1 } as unknown as Where<Person>));
        }));

      it("counts with and without where; findOne honours orderBy", () =>
        seeded(async (storage) => {
          const people = storage.collection<Person>("people");
          assert.equal(await people.count(), 5);
          assert.equal(await people.count({ team: "red" }), 2);
          assert.equal(await people.count({ team: "purple" }), 0);
          assert.equal((await people.findOne({ team: "red" }))?.id, "a");
          assert.equal((await people.findOne({ team: "red" }, [{ field: "name", direction: "desc" }]))?.id, "c");
          assert.equal(await people.findOne({ team: "purple" }), undefined);
        }));
    });

    describe("ordering", () => {
      it("sorts ascending with nulls and absent fields first, ties by id", () =>
        withStorage(async (storage) => {
          const people = storage.collection<Person>("people");
          await people.upsertMany(AGES);
          const expected = ["n1", "n2", "n3", "t1", "t2", "x", "y"];
          assert.deepEqual(await ids(people.find({ orderBy: [{ field: "age" }] })), expected);
          assert.deepEqual(await ids(people.find({ orderBy: [{ field: "age", direction: "asc" }] })), expected);
        }));

      it("sorts descending with nulls last, still ties by id ascending", () =>
        withStorage(async (storage) => {
          const people = storage.collection<Person>("people");
          await people.upsertMany(AGES);
          assert.deepEqual(
            await ids(people.find({ orderBy: [{ field: "age", direction: "desc" }] })),
            ["y", "x", "t1", "t2", "n1", "n2", "n3"],
          );
        }));

      it("sorts by several keys with mixed directions", () =>
        withStorage(async (storage) => {
          const people = storage.collection<Person>("people");
          await people.upsertMany([
            { id: "1", team: "red", age: 1 },
            { id: "2", team: "blue", age: 2 },
            { id: "3", team: "red", age: 3 },
            { id: "4", age: 4 },
            { id: "5", team: "blue", age: 1 },
          ]);
          const orderBy = [
            { field: "team", direction: "desc" },
            { field: "age", direction: "asc" },
          ] as const;
          assert.deepEqual(await ids(people.find({ orderBy })), ["1", "3", "5", "2", "4"]);
          assert.deepEqual(await ids(people.find({ orderBy: [{ field: "id", direction: "desc" }] })), [
            "5",
            "4",
            "3",
            "2",
            "1",
          ]);
        }));

      it("orders across types like SQLite: null < numbers (booleans as 1/0) < text by code point", () =>
        withStorage(async (storage) => {
          const mixed = storage.collection<Mixed>("mixed");
          await mixed.upsertMany(MIXED);
          assert.deepEqual(await ids(mixed.find({ orderBy: [{ field: "v" }] })), MIXED_ASCENDING);
          assert.deepEqual(
            await ids(mixed.find({ orderBy: [{ field: "v", direction: "desc" }] })),
            [...MIXED_ASCENDING.slice(2).reverse(), "absent", "null"],
          );
          // Ranges use the same order: text is above every number.
          assert.deepEqual(await ids(mixed.find({ where: { v: { gte: "a" } }, orderBy: [{ field: "v" }] })), [
            "lower",
            "accent",
            "replacement",
            "emoji",
          ]);
          assert.deepEqual(await ids(mixed.find({ where: { v: { lt: 2 } }, orderBy: [{ field: "v" }] })), [
            "false",
            "true",
            "one-and-a-half",
          ]);
          assert.deepEqual(await ids(mixed.find({ where: { v: { gt: 1000 } }, orderBy: [{ field: "v" }] })), [
            "upper",
            "lower",
            "accent",
            "replacement",
            "emoji",
          ]);
        }));
    });

    describe("paging", () => {
      it("returns every row and no cursor without a limit", () =>
        withStorage(async (storage) => {
          const rows = storage.collection<Row>("rows");
          await rows.upsertMany(ROWS);
          const page = await rows.find();
          assert.equal(page.items.length, 25);
          assert.equal(page.nextCursor, undefined);
        }));

      it("returns a cursor exactly when more rows exist", () =>
        withStorage(async (storage) => {
          const rows = storage.collection<Row>("rows");
          await rows.upsertMany(ROWS.slice(0, 14));
          const first = await rows.find({ limit: 7 });
          assert.equal(first.items.length, 7);
          assert.equal(typeof first.nextCursor, "string");
          const second = await rows.find({ limit: 7, after: first.nextCursor });
          assert.equal(second.items.length, 7);
          assert.equal(second.nextCursor, undefined);
          const all = await rows.find({ limit: 14 });
          assert.equal(all.nextCursor, undefined);
        }));

      for (const orderBy of PAGING_ORDERS) {
        const label = orderBy.map((o) => `${o.field} ${o.direction ?? "asc"}`).join(", ") || "id only";
        it(`pages through 25 rows 7 at a time, each row once and in order (${label})`, () =>
          withStorage(async (storage) => {
            const rows = storage.collection<Row>("rows");
            await rows.upsertMany(ROWS);
            const expected = await ids(rows.find({ orderBy }));
            assert.equal(new Set(expected).size, 25);
            const { seen, pages } = await pageThrough(rows, { orderBy }, 7);
            assert.deepEqual(seen, expected);
            assert.equal(pages, 4);
          }));
      }

      it("pages with a where clause", () =>
        withStorage(async (storage) => {
          const rows = storage.collection<Row>("rows");
          await rows.upsertMany(ROWS);
          const options: FindOptions<Row> = {
            where: { score: { ne: 1 } },
            orderBy: [{ field: "score", direction: "desc" }, { field: "group" }],
          };
          const expected = await ids(rows.find(options));
          assert.ok(expected.length > 3);
          assert.deepEqual((await pageThrough(rows, options, 3)).seen, expected);
        }));

      it("rejects a malformed cursor", () =>
        withStorage(async (storage) => {
          const rows = storage.collection<Row>("rows");
          await rows.upsertMany(ROWS);
          const foreign = Buffer.from(JSON.stringify({ hello: "world" })).toString("base64url");
          for (const after of ["not a cursor!", "", "bm9wZQ", foreign]) {
            await assert.rejects(rows.find({ limit: 5, after }), Error, `cursor ${JSON.stringify(after)}`);
          }
          // A cursor from a different orderBy does not fit either.
          const { nextCursor } = await rows.find({ limit: 5, orderBy: [{ field: "score" }, { field: "group" }] });
          await assert.rejects(rows.find({ limit: 5, after: nextCursor }));
        }));
    });

    describe("updates", () => {
      it("patches shallowly and returns the new document; undefined for a missing id", () =>
        withStorage(async (storage) => {
          const people = storage.collection<Person>("people");
          await people.insert({ id: "a", name: "Ann", age: 30, address: { city: "Oslo" } });
          const updated = await people.update("a", { age: 31, address: { street: "Main" } });
          assert.deepEqual(updated, { id: "a", name: "Ann", age: 31, address: { street: "Main" } });
          assert.deepEqual(await people.get("a"), updated);
          assert.equal(await people.update("missing", { age: 1 }), undefined);
          assert.equal(await people.get("missing"), undefined);
        }));

      it("removes fields patched with undefined", () =>
        withStorage(async (storage) => {
          const people = storage.collection<Person>("people");
          await people.insert({ id: "a", name: "Ann", email: "ann@example.com" });
          const updated = await people.update("a", { email: undefined });
          assert.deepEqual(updated, { id: "a", name: "Ann" });
          assert.equal(Object.hasOwn((await people.get("a"))!, "email"), false);
          // The unique value is free again.
          await people.insert({ id: "b", email: "ann@example.com" });
        }));

      it("conditional update: applies when the document matches, otherwise changes nothing", () =>
        withStorage(async (storage) => {
          const jobs = storage.collection<Job>("jobs");
          await jobs.insert({ id: "j", status: "done", attempts: 1 });
          assert.equal(await jobs.update("j", { status: "running" }, { where: { status: "queued" } }), undefined);
          assert.deepEqual(await jobs.get("j"), { id: "j", status: "done", attempts: 1 });
          const updated = await jobs.update("j", { attempts: 2 }, { where: { status: "done", attempts: { lt: 2 } } });
          assert.deepEqual(updated, { id: "j", status: "done", attempts: 2 });
        }));

      it("two concurrent claims of one job: exactly one wins", () =>
        withStorage(async (storage) => {
          const jobs = storage.collection<Job>("jobs");
          await jobs.insert({ id: "j", status: "queued" });
          const claim = (worker: string) =>
            jobs.update("j", { status: "running", owner: worker }, { where: { status: "queued" } });
          const results = await Promise.all([claim("w1"), claim("w2")]);
          const winners = results.filter((r) => r !== undefined);
          assert.equal(winners.length, 1);
          assert.deepEqual(await jobs.get("j"), winners[0]);
        }));

      it("updateWhere and deleteWhere return how many documents they touched", () =>
        withStorage(async (storage) => {
          const people = storage.collection<Person>("people");
          await people.upsertMany(WHERE_PEOPLE);
          assert.equal(await people.updateWhere({ team: "red" }, { team: "crimson", active: undefined }), 2);
          assert.deepEqual(await ids(people.find({ where: { team: "crimson" } })), ["a", "c"]);
          assert.equal(Object.hasOwn((await people.get("a"))!, "active"), false);
          assert.equal(await people.updateWhere({ team: "red" }, { team: "x" }), 0);

          assert.equal(await people.deleteWhere({ team: "blue" }), 2);
          assert.equal(await people.deleteWhere({ team: "blue" }), 0);
          assert.deepEqual(await ids(people.find()), ["a", "c", "d"]);
        }));
    });

    describe("transactions", () => {
      it("commits and returns fn's value", () =>
        withStorage(async (storage) => {
          const people = storage.collection<Person>("people");
          const result = await storage.transaction(async () => {
            await people.insert({ id: "a" });
            await tick();
            await people.insert({ id: "b" });
            return "done";
          });
          assert.equal(result, "done");
          assert.equal(await people.count(), 2);
        }));

      it("rolls back inserts, updates and deletes when fn throws, and rethrows", () =>
        withStorage(async (storage) => {
          const people = storage.collection<Person>("people");
          const jobs = storage.collection<Job>("jobs");
          await people.upsertMany([
            { id: "keep", name: "Keep", email: "keep@example.com" },
            { id: "gone", name: "Gone" },
          ]);
          const failure = new Error("boom");
          await assert.rejects(
            storage.transaction(async () => {
              await people.insert({ id: "new", email: "new@example.com" });
              await people.update("keep", { name: "Changed", email: undefined });
              await tick();
              await people.delete("gone");
              await jobs.insert({ id: "j", status: "queued" });
              await people.upsertMany([{ id: "bulk" }]);
              await people.deleteWhere({ id: "new" });
              await people.insert({ id: "new", email: "new@example.com" });
              // Inside, the transaction sees its own writes.
              assert.equal(await people.count(), 3);
              throw failure;
            }),
            (error) => error === failure,
          );
          assert.deepEqual(await ids(people.find()), ["gone", "keep"]);
          assert.deepEqual(await people.get("keep"), { id: "keep", name: "Keep", email: "keep@example.com" });
          assert.equal(await jobs.count(), 0);
          // Unique values taken inside the rolled-back transaction are free.
          await people.insert({ id: "other", email: "new@example.com" });
        }));

      it("two concurrent transactions never interleave", () =>
        withStorage(async (storage) => {
          const counters = storage.collection<Counter>("counters");
          await counters.insert({ id: "c", value: 0 });
          const increment = () =>
            storage.transaction(async () => {
              const current = await counters.get("c");
              await tick();
              await counters.upsert({ id: "c", value: current!.value + 1 });
            });
          await Promise.all([increment(), increment()]);
          assert.equal((await counters.get("c"))?.value, 2);
        }));

      it("a call from outside waits for the open transaction, then lands", () =>
        withStorage(async (storage) => {
          const people = storage.collection<Person>("people");
          const gate = deferred();
          const entered = deferred();
          let seenInside: Person | undefined;
          const transaction = storage.transaction(async () => {
            await people.insert({ id: "inside" });
            entered.resolve();
            await gate.promise;
            seenInside = await people.get("outside");
          });
          await entered.promise;

          let landed = false;
          const outsideWrite = people.insert({ id: "outside" }).then(() => (landed = true));
          const outsideRead = people.get("inside");
          await tick();
          await tick();
          assert.equal(landed, false);

          gate.resolve();
          await transaction;
          await outsideWrite;
          assert.equal(seenInside, undefined);
          assert.deepEqual(await outsideRead, { id: "inside" });
          assert.equal(await people.count(), 2);
        }));

      it("work started inside a finished transaction runs on its own, not in a later transaction", () =>
        withStorage(async (storage) => {
          const people = storage.collection<Person>("people");
          // Like a timer set inside fn: it inherits the transaction's async context.
          const timer = deferred<Person>();
          await storage.transaction(async () => {
            setTimeout(() => people.insert({ id: "timer" }).then(timer.resolve, timer.reject), 5);
          });
          assert.deepEqual(await timer.promise, { id: "timer" });

          const trigger = deferred();
          let leftover: Promise<unknown> = Promise.resolve();
          await storage.transaction(async () => {
            leftover = (async () => {
              await trigger.promise;
              await people.insert({ id: "leftover" });
            })();
          });
          const failure = new Error("second transaction fails");
          await assert.rejects(
            storage.transaction(async () => {
              trigger.resolve();
              await tick();
              await tick();
              await people.insert({ id: "rolled-back" });
              throw failure;
            }),
            (error) => error === failure,
          );
          await leftover;
          assert.deepEqual(await people.get("leftover"), { id: "leftover" });
          assert.equal(await people.get("rolled-back"), undefined);
        }));

      it("a nested transaction joins the outer one", () =>
        withStorage(async (storage) => {
          const people = storage.collection<Person>("people");
          const failure = new Error("outer fails");
          await assert.rejects(
            storage.transaction(async () => {
              await people.insert({ id: "outer" });
              const inner = await storage.transaction(async () => {
                // The inner transaction sees the outer's writes (no deadlock, same transaction).
                assert.deepEqual(await people.get("outer"), { id: "outer" });
                await people.insert({ id: "inner" });
                return "inner result";
              });
              assert.equal(inner, "inner result");
              throw failure;
            }),
            (error) => error === failure,
          );
          assert.equal(await people.count(), 0);
        }));

      it("a nested transaction that throws undoes only its own writes", () =>
        withStorage(async (storage) => {
          const people = storage.collection<Person>("people");
          const innerFailure = new Error("inner fails");
          await storage.transaction(async () => {
            await people.insert({ id: "before" });
            await assert.rejects(
              storage.transaction(async () => {
                await people.insert({ id: "inner" });
                await people.update("before", { name: "changed by inner" });
                throw innerFailure;
              }),
              (error) => error === innerFailure,
            );
            await people.insert({ id: "after" });
          });
          assert.deepEqual(await ids(people.find()), ["after", "before"]);
          assert.deepEqual(await people.get("before"), { id: "before" });
        }));
    });

    describe("lifecycle", () => {
      it("rejects calls after close", async () => {
        const storage = await makeStorage();
        await storage.ensureCollections(SPECS);
        const people = storage.collection<Person>("people");
        await people.insert({ id: "a" });
        await storage.close();
        await assert.rejects(people.get("a"));
        await assert.rejects(people.insert({ id: "b" }));
        await assert.rejects(people.find());
        await assert.rejects(storage.transaction(async () => undefined));
        await storage.close();
      });
    });
  });
}

// ---------------------------------------------------------------------------
// Fixtures

interface Person extends Doc {
  name?: string | null;
  age?: number | null;
  email?: string | null;
  team?: string;
  active?: boolean;
  tags?: string[];
  address?: { city?: string; street?: string };
}

interface Pair extends Doc {
  a?: number | null;
  b?: string | null;
}

interface Job extends Doc {
  status: string;
  owner?: string;
  attempts?: number;
}

interface Counter extends Doc {
  value: number;
}

interface Mixed extends Doc {
  v?: string | number | boolean | null;
}

interface Row extends Doc {
  score?: number | null;
  group?: string;
  flag?: boolean;
}

const PEOPLE_INDEXES = [{ fields: ["email"], unique: true }, { fields: ["team", "age"] }] as const;

const SPECS: CollectionSpec[] = [
  { name: "people", indexes: PEOPLE_INDEXES },
  { name: "pairs", indexes: [{ fields: ["a", "b"], unique: true }] },
  { name: "jobs", indexes: [{ fields: ["status"] }] },
  { name: "counters" },
  { name: "mixed", indexes: [{ fields: ["v"] }] },
  { name: "rows", indexes: [{ fields: ["score"] }, { fields: ["group", "score"] }] },
];

const WHERE_PEOPLE: Person[] = [
  { id: "a", name: "Ann", age: 30, email: "ann@example.com", team: "red", active: true },
  { id: "b", name: "Bob", age: null, team: "blue", active: false },
  { id: "c", name: "Cid", team: "red" },
  { id: "d", name: "Dee", age: 10, email: null, team: "green", active: true },
  { id: "e", name: "Eve", age: 20, team: "blue", active: false },
];

const AGES: Person[] = [
  { id: "y", age: 40 },
  { id: "t2", age: 20 },
  { id: "n2" },
  { id: "x", age: 30 },
  { id: "t1", age: 20 },
  { id: "n3", age: null },
  { id: "n1" },
];

const MIXED: Mixed[] = [
  { id: "emoji", v: "\u{1F600}" },
  { id: "replacement", v: "\uFFFD" },
  { id: "lower", v: "b" },
  { id: "upper", v: "B" },
  { id: "accent", v: "\u00E9" },
  { id: "two", v: 2 },
  { id: "one-and-a-half", v: 1.5 },
  { id: "true", v: true },
  { id: "false", v: false },
  { id: "null", v: null },
  { id: "absent" },
];

/** "emoji" (U+1F600) sorts after U+FFFD by code point, although its UTF-16 units sort before. */
const MIXED_ASCENDING = [
  "absent",
  "null",
  "false",
  "true",
  "one-and-a-half",
  "two",
  "upper",
  "lower",
  "accent",
  "replacement",
  "emoji",
];

/** 25 rows with duplicate sort values, nulls, absent fields, and ids not in insertion order. */
const ROWS: Row[] = Array.from({ length: 25 }, (_, i) => {
  const row: Row = { id: `r${String((i * 7) % 25).padStart(2, "0")}`, flag: i % 2 === 0 };
  row.score = i % 4 === 0 ? null : i % 3;
  if (i % 5 !== 0) row.group = i % 2 === 0 ? "x" : "y";
  return row;
});

const PAGING_ORDERS: NonNullable<FindOptions<Row>["orderBy"]>[] = [
  [],
  [{ field: "score" }],
  [{ field: "score", direction: "desc" }],
  [{ field: "group", direction: "desc" }, { field: "score" }],
  [{ field: "score" }, { field: "group", direction: "desc" }],
  [{ field: "flag", direction: "desc" }, { field: "score", direction: "desc" }, { field: "group" }],
];

// ---------------------------------------------------------------------------
// Helpers

async function ids<T extends Doc>(page: Promise<{ items: T[] }>): Promise<string[]> {
  return (await page).items.map((item) => item.id);
}

async function pageThrough<T extends Doc>(
  collection: Collection<T>,
  options: FindOptions<T>,
  limit: number,
): Promise<{ seen: string[]; pages: number }> {
  const seen: string[] = [];
  let pages = 0;
  let after: string | undefined;
  do {
    const page = await collection.find({ ...options, limit, after });
    pages++;
    seen.push(...page.items.map((item) => item.id));
    if (page.nextCursor !== undefined) assert.equal(page.items.length, limit);
    after = page.nextCursor;
  } while (after !== undefined && pages < 100);
  return { seen, pages };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail("expected the call to reject");
}

function assertUnique(error: unknown, collection: string, fields: readonly string[]): void {
  assert.ok(error instanceof UniqueConstraintError, `expected a UniqueConstraintError, got ${String(error)}`);
  assert.equal(error.collection, collection);
  assert.deepEqual([...error.fields], fields);
}

function tick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
