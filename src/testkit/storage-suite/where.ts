import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Doc, Storage, Where } from "../../ports/storage.ts";
import { ids, WHERE_PEOPLE, type Person, type WithStorage } from "./shared.ts";

interface MixedValue extends Doc {
  v?: string | number | boolean | null;
}

export function whereTests(withStorage: WithStorage): void {
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

    it("an indexed field of every JSON type answers eq, ne, in, exists, ranges and sorts, also after updates", () =>
      withStorage(async (storage) => {
        // "mixed" indexes v: an adapter that keeps indexed fields apart (SQLite's columns) must answer as for any field.
        const mixed = storage.collection<MixedValue>("mixed");
        await mixed.upsertMany([
          { id: "t", v: true },
          { id: "f", v: false },
          { id: "one", v: 1 },
          { id: "zero", v: 0 },
          { id: "neg", v: -2.5 },
          { id: "big", v: 123456789012 },
          { id: "s", v: "1" },
          { id: "n", v: null },
          { id: "absent" },
        ]);
        const found = (condition: Where<MixedValue>) => ids(mixed.find({ where: condition }));
        assert.deepEqual(await found({ v: true }), ["one", "t"]);
        assert.deepEqual(await found({ v: false }), ["f", "zero"]);
        assert.deepEqual(await found({ v: 1 }), ["one", "t"]);
        assert.deepEqual(await found({ v: "1" }), ["s"]);
        assert.deepEqual(await found({ v: { ne: true } }), ["absent", "big", "f", "n", "neg", "s", "zero"]);
        assert.deepEqual(await found({ v: null }), ["absent", "n"]);
        assert.deepEqual(await found({ v: { exists: true } }), ["big", "f", "neg", "one", "s", "t", "zero"]);
        assert.deepEqual(await found({ v: { in: [false, -2.5, "1"] } }), ["f", "neg", "s", "zero"]);
        assert.deepEqual(await found({ v: { gt: 0, lt: 100 } }), ["one", "t"]);
        // Text sorts above every number.
        assert.deepEqual(await found({ v: { gte: 123456789012 } }), ["big", "s"]);
        assert.deepEqual(await ids(mixed.find({ orderBy: [{ field: "v" }] })), ["absent", "n", "neg", "f", "zero", "one", "t", "big", "s"]);
        assert.equal(await mixed.count({ v: { in: [true] } }), 2);

        assert.equal(await mixed.deleteWhere({ v: false }), 2);
        assert.equal(await mixed.updateWhere({ v: null }, { v: 7 }), 2);
        await mixed.update("s", { v: undefined });
        await mixed.update("t", { v: "t" });
        assert.deepEqual(await found({ v: 7 }), ["absent", "n"]);
        assert.deepEqual(await found({ v: null }), ["s"]);
        assert.deepEqual(await found({ v: true }), ["one"]);
        assert.deepEqual(await found({ v: { gt: 1 } }), ["absent", "big", "n", "t"]);
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
}
