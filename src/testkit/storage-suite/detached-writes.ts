import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Doc, IdPatch } from "../../ports/storage.ts";
import { assertUnique, ids, rejection, WHERE_PEOPLE, type Person, type WithStorage } from "./shared.ts";

interface Row extends Doc {
  score?: number | null;
  group?: string;
  note?: string;
}

const detached = { detached: true } as const;

export function detachedWriteTests(withStorage: WithStorage): void {
  describe("updateEach, detached", () => {
    it("resolves with how many patches applied once they are written; reads after see them, by their indexed fields too", () =>
      withStorage(async (storage) => {
        const rows = storage.collection<Row>("rows");
        await rows.upsertMany([{ id: "r1", score: 1, group: "g" }, { id: "r2", score: 2, group: "g" }]);
        const applied = await rows.updateEach([{ id: "r1", patch: { score: 10, note: "one" } }, { id: "missing", patch: { score: 5 } }, { id: "r2", patch: { score: undefined } }], detached);
        assert.equal(applied, 2);
        assert.deepEqual(await rows.get("r1"), { id: "r1", score: 10, group: "g", note: "one" });
        assert.deepEqual(await rows.get("r2"), { id: "r2", group: "g" });
        assert.deepEqual(await ids(rows.find({ where: { group: "g", score: { gte: 10 } } })), ["r1"]);
        assert.equal(await rows.updateEach([], detached), 0);
      }));

    it("calls asked together, none awaited, are written in the order asked; one that breaks a unique index rejects alone", () =>
      withStorage(async (storage) => {
        const rows = storage.collection<Row>("rows");
        const people = storage.collection<Person>("people");
        await rows.upsertMany(Array.from({ length: 40 }, (_, index) => ({ id: `r${index}`, score: 0 })));
        await people.upsertMany(WHERE_PEOPLE);
        const calls: Array<Promise<number>> = [];
        for (let round = 1; round <= 3; round++) {
          calls.push(rows.updateEach(Array.from({ length: 40 }, (_, index): IdPatch<Row> => ({ id: `r${index}`, patch: { score: round * 100 + index } })), detached));
        }
        const taken = people.updateEach([{ id: "b", patch: { email: "ann@example.com" } }], detached);
        const renamed = people.updateEach([{ id: "c", patch: { name: "Cyd" } }], detached);
        assertUnique(await rejection(taken), "people", ["email"]);
        assert.deepEqual(await Promise.all([...calls, renamed]), [40, 40, 40, 1]);
        assert.deepEqual((await rows.find({ orderBy: [{ field: "score" }] })).items.map((row) => row.score), Array.from({ length: 40 }, (_, index) => 300 + index));
        assert.equal(Object.hasOwn((await people.get("b"))!, "email"), false);
        assert.equal((await people.get("c"))?.name, "Cyd");
      }));

    it("a call commits after those asked before it, even while one waits for a row another transaction holds", () =>
      withStorage(async (storage) => {
        const rows = storage.collection<Row>("rows");
        await rows.upsertMany([{ id: "held", score: 0 }, { id: "free", score: 0 }]);
        let holding!: () => void;
        let release!: () => void;
        const held = new Promise<void>((resolve) => (holding = resolve));
        const released = new Promise<void>((resolve) => (release = resolve));
        const holder = storage.transaction(async () => {
          await rows.getForUpdate("held");
          holding();
          await released;
        });
        await held;
        const settled: string[] = [];
        const first = rows.updateEach([{ id: "held", patch: { score: 1 } }], detached).then(() => settled.push("first"));
        const second = rows.updateEach([{ id: "free", patch: { score: 2 } }], detached).then(() => settled.push("second"));
        // Time enough for the second to commit were it not waiting for the first (PostgreSQL's pool ran them side by side).
        await Promise.race([second, new Promise((resolve) => setTimeout(resolve, 300))]);
        release();
        await Promise.all([holder, first, second]);
        assert.deepEqual(settled, ["first", "second"]);
        assert.deepEqual((await rows.find({ orderBy: [{ field: "id" }] })).items.map((row) => row.score), [2, 1]);
      }));

    it("an id listed twice, or a patch naming the document's own id, as without the option", () =>
      withStorage(async (storage) => {
        const rows = storage.collection<Row>("rows");
        await rows.upsertMany([{ id: "r1", score: 1 }, { id: "r2", score: 2 }]);
        const applied = await rows.updateEach([{ id: "r1", patch: { score: 5, note: "first" } }, { id: "r2", patch: { id: "r2", group: "g" } }, { id: "r1", patch: { score: 6 } }], detached);
        assert.equal(applied, 3);
        assert.deepEqual(await rows.get("r1"), { id: "r1", score: 6, note: "first" });
        assert.deepEqual(await rows.get("r2"), { id: "r2", score: 2, group: "g" });
      }));

    it("inside a transaction, rejects and writes nothing; the transaction goes on", () =>
      withStorage(async (storage) => {
        const rows = storage.collection<Row>("rows");
        await rows.upsertMany([{ id: "r1", score: 1 }]);
        await storage.transaction(async () => {
          const error = await rejection(rows.updateEach([{ id: "r1", patch: { score: 2 } }], detached));
          assert.match(String(error), /cannot run inside a transaction/);
          await rows.update("r1", { note: "kept" });
        });
        assert.deepEqual(await rows.get("r1"), { id: "r1", score: 1, note: "kept" });
      }));

    it("rejects what updateEach rejects: no array, an empty id, a patch that is not an object", () =>
      withStorage(async (storage) => {
        const rows = storage.collection<Row>("rows");
        await rows.upsertMany([{ id: "r1", score: 1 }]);
        assert.ok((await rejection(rows.updateEach({} as unknown as IdPatch<Row>[], detached))) instanceof TypeError);
        assert.ok((await rejection(rows.updateEach([{ id: "", patch: { score: 2 } }], detached))) instanceof TypeError);
        assert.ok((await rejection(rows.updateEach([{ id: "r1", patch: "score" as unknown as Row }], detached))) instanceof TypeError);
        assert.deepEqual(await rows.get("r1"), { id: "r1", score: 1 });
      }));

    it("close waits for the detached writes, other calls and transactions asked before it", () =>
      withStorage(async (storage) => {
        const rows = storage.collection<Row>("rows");
        await rows.upsertMany([{ id: "r1", score: 1 }]);
        const written = rows.updateEach([{ id: "r1", patch: { score: 2 } }], detached);
        const updated = rows.update("r1", { note: "kept" });
        const transaction = storage.transaction(async () => {
          await rows.insert({ id: "r2", score: 3 });
          return "committed";
        });
        await storage.close();
        assert.deepEqual([await written, (await updated)?.note, await transaction], [1, "kept", "committed"]);
      }));
  });
}
