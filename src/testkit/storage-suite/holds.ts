import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, it } from "node:test";
import type { Doc, Storage } from "../../ports/storage.ts";
import { deferred, ids, type Person, type WithStorage } from "./shared.ts";

interface Counter extends Doc {
  value: number;
}

/** How long the first transaction keeps its hold while the second may still end on its own. */
const HOLD_MS = 200;

/**
 * Runs `first` until it has taken its hold (it awaits `held()`), then `second`,
 * and lets the first go on once the second has ended, or after HOLD_MS if it
 * has not: the second then waits on the first's hold, as it should. A storage
 * that holds nothing lets the second read, write and commit before the first
 * goes on, and the outcome shows it.
 */
async function oneBehindTheOther<R>(storage: Storage, first: (held: () => Promise<void>) => Promise<void>, second: () => Promise<R>): Promise<R> {
  const holding = deferred();
  const release = deferred();
  const firstDone = storage.transaction(() =>
    first(async () => {
      holding.resolve();
      await release.promise;
    }),
  );
  await holding.promise;
  const secondDone = storage.transaction(second);
  await Promise.race([secondDone.catch(() => undefined), sleep(HOLD_MS)]);
  release.resolve();
  await firstDone;
  return secondDone;
}

export function holdTests(withStorage: WithStorage): void {
  describe("holds to the commit (getForUpdate, lockKey)", () => {
    it("getForUpdate in two transactions at once: the second waits for the first's commit and reads its write", { timeout: 10_000 }, () =>
      withStorage(async (storage) => {
        const counters = storage.collection<Counter>("counters");
        await counters.insert({ id: "c", value: 0 });
        const increment = async () => {
          const read = await counters.getForUpdate("c");
          await counters.upsert({ id: "c", value: read!.value + 1 });
          return read!.value;
        };
        const secondRead = await oneBehindTheOther(
          storage,
          async (held) => {
            const read = await counters.getForUpdate("c");
            await held();
            await counters.upsert({ id: "c", value: read!.value + 1 });
          },
          increment,
        );
        assert.equal(secondRead, 1);
        assert.equal((await counters.get("c"))?.value, 2);
      }));

    it("lockKey of a key no document has, in two transactions at once: the second waits for the first's commit and reads its write", { timeout: 10_000 }, () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        const addUnlessTaken = async (id: string) => {
          await people.lockKey("team:red");
          if ((await people.count({ team: "red" })) > 0) return false;
          await people.insert({ id, team: "red" });
          return true;
        };
        const secondAdded = await oneBehindTheOther(
          storage,
          async (held) => {
            await people.lockKey("team:red");
            assert.equal(await people.count({ team: "red" }), 0);
            await held();
            await people.insert({ id: "first", team: "red" });
          },
          () => addUnlessTaken("second"),
        );
        assert.equal(secondAdded, false);
        assert.deepEqual(await ids(people.find()), ["first"]);
      }));

    it("a getForUpdate or a lockKey holds nothing else: another document, another key, the same key on another collection", { timeout: 10_000 }, () =>
      withStorage(async (storage) => {
        // One transaction at a time: there, the second would wait for the first whatever it holds.
        if (!storage.transactionsRunConcurrently) return;
        const counters = storage.collection<Counter>("counters");
        const people = storage.collection<Person>("people");
        await counters.upsertMany([{ id: "held", value: 0 }, { id: "free", value: 0 }]);
        const secondDone = deferred();
        const first = storage.transaction(async () => {
          await counters.getForUpdate("held");
          await people.lockKey("k");
          // Waits for the second: were anything below held by the first, neither would end (the test's timeout).
          await secondDone.promise;
        });
        await storage.transaction(async () => {
          await counters.getForUpdate("free");
          await counters.update("free", { value: 1 });
          await people.lockKey("other");
          await counters.lockKey("k");
        });
        secondDone.resolve();
        await first;
        assert.equal((await counters.get("free"))?.value, 1);
      }));

    it("getForUpdate of an absent document answers undefined", () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        assert.equal(await storage.transaction(() => people.getForUpdate("missing")), undefined);
      }));

    it("outside a transaction, getForUpdate and lockKey reject: a hold ending with the call would protect nothing", () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        await people.insert({ id: "a" });
        await assert.rejects(people.getForUpdate("a"));
        await assert.rejects(people.lockKey("a"));
        // After a transaction too: its hold ended with it.
        await storage.transaction(() => people.getForUpdate("a"));
        await assert.rejects(people.getForUpdate("a"));
      }));
  });
}
