import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Doc } from "../../ports/storage.ts";
import { deferred, ids, tick, type Person, type WithStorage } from "./shared.ts";

interface Counter extends Doc {
  value: number;
}

// Transactions of one process run one at a time (SQLite, memory) or side by side
// (`transactionsRunConcurrently`, PostgreSQL); each test asserts what its storage promises.
// A storage that claims to run them side by side but runs them one at a time deadlocks on
// the gates below: the test then fails by its timeout.
export function concurrencyTests(withStorage: WithStorage): void {
  describe("transactions at once", () => {
    it("two transactions at once both commit: one after the other, or side by side without seeing each other's uncommitted writes", { timeout: 10_000 }, () =>
      withStorage(async (storage) => {
        if (!storage.transactionsRunConcurrently) {
          const counters = storage.collection<Counter>("counters");
          await counters.insert({ id: "c", value: 0 });
          const increment = () =>
            storage.transaction(async () => {
              const current = await counters.get("c");
              await tick();
              await counters.upsert({ id: "c", value: current!.value + 1 });
            });
          await Promise.all([increment(), increment()]);
          assert.equal((await counters.get("c"))?.value, 2);
          return;
        }
        const people = storage.collection<Person>("people");
        const firstWrote = deferred();
        const secondDone = deferred();
        const first = storage.transaction(async () => {
          await people.insert({ id: "first" });
          firstWrote.resolve();
          await secondDone.promise;
        });
        await firstWrote.promise;
        const seenBySecond = await storage.transaction(async () => {
          await people.insert({ id: "second" });
          return people.get("first");
        });
        assert.equal(seenBySecond, undefined);
        secondDone.resolve();
        await first;
        assert.deepEqual(await ids(people.find()), ["first", "second"]);
      }));

    it("a call from outside during an open transaction: lands after it, or at once without seeing its uncommitted writes", { timeout: 10_000 }, () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        const gate = deferred();
        const entered = deferred();
        let seenInside: Person | undefined;
        const transaction = storage.transaction(async () => {
          await people.insert({ id: "inside" });
          entered.resolve();
          await gate.promise;
          seenInside = await people.get("outside");
        });
        await entered.promise;

        if (storage.transactionsRunConcurrently) {
          assert.equal(await people.get("inside"), undefined);
          await people.insert({ id: "outside" });
          gate.resolve();
          await transaction;
          // Committed before the transaction read it (READ COMMITTED).
          assert.deepEqual(seenInside, { id: "outside" });
        } else {
          let landed = false;
          const outsideWrite = people.insert({ id: "outside" }).then(() => (landed = true));
          const outsideRead = people.get("inside");
          await tick();
          await tick();
          assert.equal(landed, false);

          gate.resolve();
          await transaction;
          await outsideWrite;
          assert.equal(seenInside, undefined);
          assert.deepEqual(await outsideRead, { id: "inside" });
        }
        assert.equal(await people.count(), 2);
      }));

    it("of two transactions at once, each with a nested one that fails, the one that throws rolls back alone", () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        const failure = new Error("first fails");
        const run = (name: string, fail: boolean) =>
          storage.transaction(async () => {
            await people.insert({ id: `${name}-outer` });
            await tick();
            await assert.rejects(
              storage.transaction(async () => {
                await people.insert({ id: `${name}-nested` });
                await tick();
                throw new Error("nested fails");
              }),
            );
            await people.insert({ id: `${name}-after` });
            if (fail) throw failure;
          });
        const [first, second] = await Promise.allSettled([run("first", true), run("second", false)]);
        assert.deepEqual(first, { status: "rejected", reason: failure });
        assert.equal(second.status, "fulfilled");
        assert.deepEqual(await ids(people.find()), ["second-after", "second-outer"]);
      }));
  });
}
