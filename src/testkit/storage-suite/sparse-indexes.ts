import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Collection, Doc, FindOptions, IndexSpec, Storage, Where } from "../../ports/storage.ts";
import { assertUnique, rejection, type WithStorage } from "./shared.ts";

interface Tagged extends Doc {
  tag?: string | null;
  group?: string | null;
  rank?: number | null;
  code?: string | null;
}

const INDEXES: readonly IndexSpec[] = [{ fields: ["tag"] }, { fields: ["group", "rank"] }, { fields: ["code"], unique: true }];
const sparse = (indexes: readonly IndexSpec[]) => indexes.map((index) => ({ ...index, sparse: true }));

/** Every mix of absent, null and set fields the queries below tell apart. */
const DOCS: Tagged[] = [
  { id: "a", tag: "x", group: "g", rank: 1, code: "A" },
  { id: "b", tag: null, group: "g", rank: null, code: null },
  { id: "c", group: "g", rank: 3 },
  { id: "d", tag: "y", group: null, rank: 2, code: "D" },
  { id: "e", tag: "x", rank: 5 },
  { id: "f", tag: "z", group: "h", rank: 2, code: "F" },
];

/** What a query may ask of indexed fields, answered through the index or not. */
const QUERIES: readonly FindOptions<Tagged>[] = [
  { where: { tag: "x" } },
  { where: { tag: { in: ["x", "z"] } } },
  { where: { tag: { gt: "x" } } },
  { where: { tag: { lte: "y" } } },
  { where: { tag: null } },
  { where: { tag: { exists: false } } },
  { where: { tag: { exists: true } } },
  { where: { tag: { ne: "x" } } },
  { where: { tag: { ne: null } } },
  { where: { group: "g", rank: { lt: 3 } } },
  { where: { group: "g", rank: { gte: 1 } }, orderBy: [{ field: "rank", direction: "desc" }] },
  { where: { group: "g", rank: null } },
  { where: { group: { in: ["g", "h"] }, rank: 2 } },
  { where: { group: null } },
  { where: { code: "D" } },
  { where: { code: { in: ["A", "F", "Q"] } } },
  { where: { code: null } },
  { orderBy: [{ field: "tag" }] },
  { orderBy: [{ field: "tag", direction: "desc" }] },
  { where: { rank: { gt: 1 } }, orderBy: [{ field: "group" }, { field: "rank", direction: "desc" }] },
];

/** Every document a find matches, paging two at a time: cursors go through the same queries. */
async function allPages(collection: Collection<Tagged>, query: FindOptions<Tagged>): Promise<string[]> {
  const found: string[] = [];
  let after: string | undefined;
  do {
    const page = await collection.find({ ...query, limit: 2, ...(after === undefined ? {} : { after }) });
    found.push(...page.items.map((item) => item.id));
    after = page.nextCursor;
  } while (after !== undefined);
  return found;
}

async function answers(storage: Storage, name: string): Promise<Record<string, string[] | number>> {
  const collection = storage.collection<Tagged>(name);
  const answered: Record<string, string[] | number> = {};
  for (const query of QUERIES) {
    const label = JSON.stringify(query);
    answered[label] = (await collection.find(query)).items.map((item) => item.id);
    answered[`${label} paged`] = await allPages(collection, query);
    answered[`${label} counted`] = await collection.count(query.where as Where<Tagged> | undefined);
  }
  return answered;
}

export function sparseIndexTests(withStorage: WithStorage): void {
  describe("sparse indexes", () => {
    it("answer every query as full indexes of the same fields do: on values, on null, ranges, lists, sorts and pages", () =>
      withStorage(async (storage) => {
        await storage.ensureCollections([
          { name: "sparse_tags", indexes: sparse(INDEXES) },
          { name: "dense_tags", indexes: INDEXES },
        ]);
        await storage.collection<Tagged>("sparse_tags").upsertMany(DOCS);
        await storage.collection<Tagged>("dense_tags").upsertMany(DOCS);
        const expected = await answers(storage, "dense_tags");
        assert.deepEqual(await answers(storage, "sparse_tags"), expected);
        // Spot checks that the reference is itself right where the index leaves documents out.
        assert.deepEqual(expected[JSON.stringify({ where: { tag: null } })], ["b", "c"]);
        assert.deepEqual(expected[JSON.stringify({ where: { group: "g", rank: null } })], ["b"]);
        assert.deepEqual(expected[JSON.stringify({ orderBy: [{ field: "tag" }] })], ["b", "c", "a", "e", "d", "f"]);
      }));

    it("follow documents in and out as their fields are set and cleared, by every kind of write", () =>
      withStorage(async (storage) => {
        await storage.ensureCollections([{ name: "sparse_tags", indexes: sparse(INDEXES) }]);
        const tags = storage.collection<Tagged>("sparse_tags");
        await tags.insert({ id: "a" });
        await tags.upsertMany([{ id: "b", tag: "x" }]);
        assert.deepEqual((await tags.find({ where: { tag: "x" } })).items.map((doc) => doc.id), ["b"]);
        await tags.update("a", { tag: "x", group: "g", rank: 1 });
        await tags.update("b", { tag: null });
        assert.deepEqual((await tags.find({ where: { tag: "x" } })).items.map((doc) => doc.id), ["a"]);
        assert.deepEqual((await tags.find({ where: { group: "g", rank: { lte: 1 } } })).items.map((doc) => doc.id), ["a"]);
        assert.equal(await tags.updateWhere({ tag: null }, { tag: "y" }), 1);
        await tags.upsert({ id: "c", group: "g", rank: 0 });
        assert.deepEqual((await tags.find({ where: { tag: { in: ["x", "y"] } } })).items.map((doc) => doc.id), ["a", "b"]);
        assert.deepEqual((await tags.find({ where: { group: "g", rank: { lte: 1 } } })).items.map((doc) => doc.id), ["a", "c"]);
        await tags.update("a", { rank: undefined });
        assert.deepEqual((await tags.find({ where: { group: "g", rank: { lte: 1 } } })).items.map((doc) => doc.id), ["c"]);
        assert.equal(await tags.deleteWhere({ tag: "y" }), 1);
        assert.deepEqual((await tags.find({ orderBy: [{ field: "tag" }] })).items.map((doc) => doc.id), ["c", "a"]);
      }));

    it("when unique, refuse a value taken and let any number of documents leave the fields absent or null", () =>
      withStorage(async (storage) => {
        await storage.ensureCollections([{ name: "sparse_tags", indexes: sparse(INDEXES) }]);
        const tags = storage.collection<Tagged>("sparse_tags");
        await tags.insert({ id: "a", code: "A" });
        await tags.insert({ id: "b", code: null });
        await tags.insert({ id: "c" });
        await tags.insert({ id: "d", code: null });
        assertUnique(await rejection(tags.insert({ id: "e", code: "A" })), "sparse_tags", ["code"]);
        assertUnique(await rejection(tags.update("b", { code: "A" })), "sparse_tags", ["code"]);
        await tags.update("a", { code: null });
        await tags.update("b", { code: "A" });
        assert.deepEqual((await tags.find({ where: { code: "A" } })).items.map((doc) => doc.id), ["b"]);
        assert.deepEqual((await tags.find({ where: { code: null } })).items.map((doc) => doc.id), ["a", "c", "d"]);
      }));

    it("made sparse, or full again, by a later declaration: every document stays findable and unique values stay unique", () =>
      withStorage(async (storage) => {
        const tags = storage.collection<Tagged>("redeclared");
        await storage.ensureCollections([{ name: "redeclared", indexes: INDEXES }]);
        await tags.upsertMany(DOCS);
        for (const indexes of [sparse(INDEXES), INDEXES]) {
          await storage.ensureCollections([{ name: "redeclared", indexes }]);
          assert.deepEqual((await tags.find({ where: { tag: "x" } })).items.map((doc) => doc.id), ["a", "e"]);
          assert.deepEqual((await tags.find({ where: { tag: null } })).items.map((doc) => doc.id), ["b", "c"]);
          assert.deepEqual((await tags.find({ where: { group: "g", rank: { gte: 1 } } })).items.map((doc) => doc.id), ["a", "c"]);
          assertUnique(await rejection(tags.insert({ id: "z", code: "D" })), "redeclared", ["code"]);
        }
      }));
  });
}
