import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ids, WHERE_PEOPLE, type Job, type Person, type WithStorage } from "./shared.ts";

export function updateTests(withStorage: WithStorage): void {
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
}
