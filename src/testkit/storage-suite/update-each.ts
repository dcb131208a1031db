import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Doc } from "../../ports/storage.ts";
import { assertUnique, ids, rejection, WHERE_PEOPLE, type Person, type WithStorage } from "./shared.ts";

interface Row extends Doc {
  score?: number | null;
  group?: string;
  note?: string | { text: string } | null;
  seen?: boolean;
}

export function updateEachTests(withStorage: WithStorage): void {
  describe("updateEach", () => {
    it("patches each listed document its own way, skipping absent ids; answers how many it patched", () =>
      withStorage(async (storage) => {
        const rows = storage.collection<Row>("rows");
        await rows.upsertMany([
          { id: "r1", score: 1, group: "g", note: "one" },
          { id: "r2", score: 2, group: "g", note: "two" },
          { id: "r3", score: 3, group: "g", note: "three" },
        ]);
        const applied = await rows.updateEach([
          { id: "r1", patch: { score: 10, seen: true, note: undefined } },
          { id: "missing", patch: { score: 99 } },
          { id: "r2", patch: { score: 20, seen: false } },
          // Another shape: an object and a null.
          { id: "r3", patch: { note: { text: "three" }, score: null } },
        ]);
        assert.equal(applied, 3);
        assert.deepEqual(await rows.get("r1"), { id: "r1", score: 10, group: "g", seen: true });
        assert.deepEqual(await rows.get("r2"), { id: "r2", score: 20, group: "g", note: "two", seen: false });
        assert.deepEqual(await rows.get("r3"), { id: "r3", score: null, group: "g", note: { text: "three" } });
        assert.equal(await rows.get("missing"), undefined);
        // Indexed fields are found by their new values.
        assert.deepEqual(await ids(rows.find({ where: { group: "g", score: { gte: 10 } } })), ["r1", "r2"]);
        assert.deepEqual(await ids(rows.find({ where: { score: null } })), ["r3"]);
        assert.equal(await rows.updateEach([]), 0);
      }));

    it("many documents of one patch shape, each with its own values: every one written, none twice", () =>
      withStorage(async (storage) => {
        const rows = storage.collection<Row>("rows");
        for (const count of [11, 300]) {
          const group = `g${count}`;
          await rows.upsertMany(Array.from({ length: count }, (_, index) => ({ id: `${group}-${String(index).padStart(3, "0")}`, score: 0, group })));
          const applied = await rows.updateEach(Array.from({ length: count }, (_, index) => ({ id: `${group}-${String(index).padStart(3, "0")}`, patch: { score: index + 1, note: `n${index}` } })));
          assert.equal(applied, count);
          const stored = (await rows.find({ where: { group }, orderBy: [{ field: "score" }] })).items;
          assert.deepEqual(
            stored.map((row) => `${row.id} ${row.score} ${String(row.note)}`),
            Array.from({ length: count }, (_, index) => `${group}-${String(index).padStart(3, "0")} ${index + 1} n${index}`),
          );
        }
      }));

    it("patches with the same fields, each removing others of them (or all), and numbers JSON cannot write (stored null, as JSON.stringify writes them)", () =>
      withStorage(async (storage) => {
        const rows = storage.collection<Row>("rows");
        const full = { score: 1, group: "g", note: "n", seen: true };
        await rows.upsertMany(["r1", "r2", "r3", "r4", "r5"].map((id) => ({ id, ...full })));
        const applied = await rows.updateEach([
          { id: "r1", patch: { score: undefined, note: "one", seen: false } },
          { id: "r2", patch: { score: 2, note: undefined, seen: undefined } },
          { id: "r3", patch: { score: undefined, note: undefined, seen: undefined } },
          { id: "r4", patch: { score: Number.NaN, note: "four", seen: true } },
          { id: "r5", patch: { score: Number.POSITIVE_INFINITY, note: undefined, seen: false } },
        ]);
        assert.equal(applied, 5);
        assert.deepEqual(await rows.get("r1"), { id: "r1", group: "g", note: "one", seen: false });
        assert.deepEqual(await rows.get("r2"), { id: "r2", score: 2, group: "g" });
        assert.deepEqual(await rows.get("r3"), { id: "r3", group: "g" });
        assert.deepEqual(await rows.get("r4"), { id: "r4", score: null, group: "g", note: "four", seen: true });
        assert.deepEqual(await rows.get("r5"), { id: "r5", score: null, group: "g", seen: false });
      }));

    it("an id listed twice takes both patches in list order; a patch may name the document's own id", () =>
      withStorage(async (storage) => {
        const rows = storage.collection<Row>("rows");
        await rows.upsertMany([{ id: "r1", score: 1, group: "g" }, { id: "r2", score: 2 }]);
        const applied = await rows.updateEach([
          { id: "r1", patch: { score: 5, note: "first" } },
          { id: "r2", patch: { id: "r2", seen: true } },
          { id: "r1", patch: { score: 6 } },
        ]);
        assert.equal(applied, 3);
        assert.deepEqual(await rows.get("r1"), { id: "r1", score: 6, group: "g", note: "first" });
        assert.deepEqual(await rows.get("r2"), { id: "r2", score: 2, seen: true });
      }));

    it("all or nothing: a patch that breaks a unique index rejects the call and leaves every document as it was", () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        await people.upsertMany(WHERE_PEOPLE);
        const error = await rejection(
          people.updateEach([
            { id: "b", patch: { name: "Bobby" } },
            { id: "c", patch: { name: "Cyd", age: 5 } },
            { id: "e", patch: { email: "ann@example.com" } },
          ]),
        );
        assertUnique(error, "people", ["email"]);
        assert.deepEqual(await people.get("b"), WHERE_PEOPLE[1]);
        assert.deepEqual(await people.get("c"), WHERE_PEOPLE[2]);
        assert.deepEqual(await people.get("e"), WHERE_PEOPLE[4]);
        // Inside a transaction, the rejected call undoes its own patches only.
        await storage.transaction(async () => {
          await people.update("d", { name: "Dee2" });
          await rejection(people.updateEach([{ id: "b", patch: { email: "x@example.com" } }, { id: "e", patch: { email: "ann@example.com" } }]));
        });
        assert.equal((await people.get("d"))?.name, "Dee2");
        assert.equal(Object.hasOwn((await people.get("b"))!, "email"), false);
      }));
  });
}
