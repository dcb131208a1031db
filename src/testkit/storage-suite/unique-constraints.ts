import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Doc } from "../../ports/storage.ts";
import { assertUnique, ids, rejection, type Person, type WithStorage } from "./shared.ts";

export function uniqueConstraintTests(withStorage: WithStorage): void {
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

    it("inside a transaction, a refused update changes nothing and the transaction's other writes commit", () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        await people.insert({ id: "a", email: "ann@example.com" });
        await people.insert({ id: "b", email: "bob@example.com", name: "Bob" });
        await storage.transaction(async () => {
          await people.update("b", { name: "Robert" });
          assertUnique(await rejection(people.update("b", { email: "ann@example.com", name: "Bobby" })), "people", ["email"]);
          assert.deepEqual(await people.get("b"), { id: "b", email: "bob@example.com", name: "Robert" });
          await people.insert({ id: "c", email: "cy@example.com" });
        });
        assert.deepEqual(await people.get("b"), { id: "b", email: "bob@example.com", name: "Robert" });
        assert.equal(await people.count(), 3);
      }));

    it("inside a transaction, a refused insert writes nothing and the transaction's other writes commit", () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        await people.insert({ id: "a", email: "ann@example.com" });
        await storage.transaction(async () => {
          await people.insert({ id: "b", email: "bob@example.com" });
          assertUnique(await rejection(people.insert({ id: "a", email: "other@example.com" })), "people", ["id"]);
          assertUnique(await rejection(people.insert({ id: "c", email: "bob@example.com" })), "people", ["email"]);
          assert.equal(await people.get("c"), undefined);
          await people.insert({ id: "d", email: "dee@example.com" });
        });
        assert.deepEqual(await ids(people.find()), ["a", "b", "d"]);
        assert.deepEqual(await people.get("a"), { id: "a", email: "ann@example.com" });
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
}

interface Pair extends Doc {
  a?: number | null;
  b?: string | null;
}
