import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Doc } from "../../ports/storage.ts";
import { assertUnique, PEOPLE_INDEXES, rejection, SPECS, type Person, type WithStorage } from "./shared.ts";

export function collectionTests(withStorage: WithStorage): void {
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
}
