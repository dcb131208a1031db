import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { JsonText } from "../../ports/storage.ts";
import { ids, type Person, type WithStorage } from "./shared.ts";

export function documentTests(withStorage: WithStorage): void {
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

    it("upsertMany stores a field given as JsonText as the value its text spells", () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        const address = { city: "Oslo", street: "Storgata \"1\"" };
        await people.upsertMany([
          { id: "a", name: "Ann", address: new JsonText(JSON.stringify(address)), tags: new JsonText('["x", "y"]') },
          { id: "b", name: new JsonText('"Bob"'), email: new JsonText('"bob@example.com"'), age: new JsonText("41") },
        ]);
        assert.deepEqual(await people.get("a"), { id: "a", name: "Ann", address, tags: ["x", "y"] });
        assert.deepEqual(await people.get("b"), { id: "b", name: "Bob", email: "bob@example.com", age: 41 });
        // Queried and indexed like any other value (email is a unique index).
        assert.deepEqual(await ids(people.find({ where: { email: "bob@example.com", age: { gt: 40 } } })), ["b"]);
        await people.upsertMany([{ id: "b", name: "Bo", address: new JsonText("null") }]);
        assert.deepEqual(await people.get("b"), { id: "b", name: "Bo", address: null });
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
}
