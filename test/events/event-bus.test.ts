import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { memoryStorage } from "../../adapters/storage/memory/index.ts";
import { EventBus, silentLogger, type Doc } from "../../src/index.ts";

declare module "../../src/events/event-bus.ts" {
  interface ReachkitEvents {
    "test.changed": { id: string };
  }
}

/** A storage, a bus over it as the kit makes it, and the "changes" a change writes. */
async function world() {
  const storage = memoryStorage();
  await storage.ensureCollections([{ name: "changes" }, { name: "effects" }]);
  const bus = new EventBus(silentLogger(), (work) => storage.afterCommit!(work));
  const changes = storage.collection<Doc>("changes");
  const effects = storage.collection<Doc>("effects");
  /** A change that writes a row and emits its event in one transaction, then fails if asked to. */
  const change = (id: string, fail = false) =>
    storage.transaction(async () => {
      await changes.insert({ id });
      await bus.emit("test.changed", { id });
      if (fail) throw new Error("the change fails after its event");
    });
  return { storage, bus, changes, effects, change };
}

describe("event bus: events emitted inside the change's transaction", () => {
  it("an in-transaction listener's write commits with the change, and is undone with it", async () => {
    const w = await world();
    w.bus.onInTransaction("test.changed", async ({ id }) => void (await w.effects.insert({ id: `delivery of ${id}` })));
    await w.change("kept");
    await assert.rejects(w.change("undone", true), /the change fails/);
    assert.deepEqual((await w.effects.find()).items, [{ id: "delivery of kept" }]);
    assert.deepEqual((await w.changes.find()).items, [{ id: "kept" }]);
  });

  it("a failing in-transaction listener fails the change: neither is stored", async () => {
    const w = await world();
    w.bus.onInTransaction("test.changed", async () => {
      throw new Error("cannot queue the delivery");
    });
    await assert.rejects(w.change("c"), /cannot queue the delivery/);
    assert.equal(await w.changes.count(), 0);
  });

  it("at every commit a change has its in-transaction listener's write: none is ever stored without it", async () => {
    const w = await world();
    w.bus.onInTransaction("test.changed", async ({ id }) => void (await w.effects.insert({ id })));
    // What a kill -9 right after the change's commit would leave: the state at that commit.
    const atCommits: Array<[number, number]> = [];
    const original = w.storage.transaction.bind(w.storage);
    w.storage.transaction = async (fn) => {
      const result = await original(fn);
      atCommits.push([await w.changes.count(), await w.effects.count()]);
      return result;
    };
    for (const id of ["a", "b", "c"]) await w.change(id);
    assert.deepEqual(atCommits, [
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
  });

  it("an ordinary listener runs once the change has committed, outside its transaction, and never for a change rolled back; its failure fails nothing", async () => {
    const w = await world();
    const heard: Array<{ id: string; committed: boolean }> = [];
    w.bus.on("test.changed", async ({ id }) => {
      // Outside the transaction: this read does not wait for it and sees the commit.
      heard.push({ id, committed: (await w.changes.get(id)) !== undefined });
    });
    w.bus.on("test.changed", () => {
      throw new Error("a host listener fails");
    });
    await w.change("kept");
    await assert.rejects(w.change("undone", true));
    assert.deepEqual(heard, [{ id: "kept", committed: true }]);
    // Emitted outside any transaction, it runs at once.
    await w.bus.emit("test.changed", { id: "kept" });
    assert.equal(heard.length, 2);
  });
});
