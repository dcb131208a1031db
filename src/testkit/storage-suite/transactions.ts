import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { deferred, ids, tick, type Job, type Person, type WithStorage } from "./shared.ts";

export function transactionTests(withStorage: WithStorage): void {
  describe("transactions", () => {
    it("commits and returns fn's value", () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        const result = await storage.transaction(async () => {
          await people.insert({ id: "a" });
          await tick();
          await people.insert({ id: "b" });
          return "done";
        });
        assert.equal(result, "done");
        assert.equal(await people.count(), 2);
      }));

    it("rolls back inserts, updates and deletes when fn throws, and rethrows", () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        const jobs = storage.collection<Job>("jobs");
        await people.upsertMany([
          { id: "keep", name: "Keep", email: "keep@example.com" },
          { id: "gone", name: "Gone" },
        ]);
        const failure = new Error("boom");
        await assert.rejects(
          storage.transaction(async () => {
            await people.insert({ id: "new", email: "new@example.com" });
            await people.update("keep", { name: "Changed", email: undefined });
            await tick();
            await people.delete("gone");
            await jobs.insert({ id: "j", status: "queued" });
            await people.upsertMany([{ id: "bulk" }]);
            await people.deleteWhere({ id: "new" });
            await people.insert({ id: "new", email: "new@example.com" });
            // Inside, the transaction sees its own writes.
            assert.equal(await people.count(), 3);
            throw failure;
          }),
          (error) => error === failure,
        );
        assert.deepEqual(await ids(people.find()), ["gone", "keep"]);
        assert.deepEqual(await people.get("keep"), { id: "keep", name: "Keep", email: "keep@example.com" });
        assert.equal(await jobs.count(), 0);
        // Unique values taken inside the rolled-back transaction are free.
        await people.insert({ id: "other", email: "new@example.com" });
      }));

    it("work started inside a finished transaction runs on its own, not in a later transaction", () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        // Like a timer set inside fn: it inherits the transaction's async context.
        const timer = deferred<Person>();
        await storage.transaction(async () => {
          setTimeout(() => people.insert({ id: "timer" }).then(timer.resolve, timer.reject), 5);
        });
        assert.deepEqual(await timer.promise, { id: "timer" });

        const trigger = deferred();
        let leftover: Promise<unknown> = Promise.resolve();
        await storage.transaction(async () => {
          leftover = (async () => {
            await trigger.promise;
            await people.insert({ id: "leftover" });
          })();
        });
        const failure = new Error("second transaction fails");
        await assert.rejects(
          storage.transaction(async () => {
            trigger.resolve();
            await tick();
            await tick();
            await people.insert({ id: "rolled-back" });
            throw failure;
          }),
          (error) => error === failure,
        );
        await leftover;
        assert.deepEqual(await people.get("leftover"), { id: "leftover" });
        assert.equal(await people.get("rolled-back"), undefined);
      }));

    it("transactions one after another each keep their context across awaits, timers and nesting", { timeout: 10_000 }, () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        for (let round = 0; round < 3; round++) {
          await storage.transaction(async () => {
            await tick();
            await new Promise((resolve) => setTimeout(resolve, 1));
            // Were the context lost, this would wait for the transaction it is in: a deadlock, failed by the timeout.
            await storage.transaction(() => people.insert({ id: `nested-${round}` }));
            await people.insert({ id: `outer-${round}` });
          });
        }
        assert.equal(await people.count(), 6);
      }));

    it("a nested transaction joins the outer one", () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        const failure = new Error("outer fails");
        await assert.rejects(
          storage.transaction(async () => {
            await people.insert({ id: "outer" });
            const inner = await storage.transaction(async () => {
              // The inner transaction sees the outer's writes (no deadlock, same transaction).
              assert.deepEqual(await people.get("outer"), { id: "outer" });
              await people.insert({ id: "inner" });
              return "inner result";
            });
            assert.equal(inner, "inner result");
            throw failure;
          }),
          (error) => error === failure,
        );
        assert.equal(await people.count(), 0);
      }));

    it("a nested transaction that throws undoes only its own writes", () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        const innerFailure = new Error("inner fails");
        await storage.transaction(async () => {
          await people.insert({ id: "before" });
          await assert.rejects(
            storage.transaction(async () => {
              await people.insert({ id: "inner" });
              await people.update("before", { name: "changed by inner" });
              throw innerFailure;
            }),
            (error) => error === innerFailure,
          );
          await people.insert({ id: "after" });
        });
        assert.deepEqual(await ids(people.find()), ["after", "before"]);
        assert.deepEqual(await people.get("before"), { id: "before" });
      }));

    it("nested transactions one after another at several depths: each that throws undoes its own writes and those nested in it, the others keep theirs", () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        const failure = new Error("fails");
        const failing = (work: () => Promise<void>) => assert.rejects(storage.transaction(async () => {
          await work();
          throw failure;
        }), (error) => error === failure);
        await storage.transaction(async () => {
          await storage.transaction(async () => {
            await people.insert({ id: "a" });
            await failing(() => people.insert({ id: "a-inner" }).then(() => undefined));
            await storage.transaction(() => people.insert({ id: "a-inner-kept" }));
          });
          await failing(async () => {
            await people.insert({ id: "b" });
            await storage.transaction(() => people.insert({ id: "b-inner" }));
          });
          await storage.transaction(async () => {
            await people.insert({ id: "c" });
            await storage.transaction(async () => {
              await storage.transaction(() => people.insert({ id: "c-deep" }));
              await failing(() => people.update("c", { name: "undone" }).then(() => undefined));
            });
          });
        });
        assert.deepEqual(await ids(people.find()), ["a", "a-inner-kept", "c", "c-deep"]);
        assert.deepEqual(await people.get("c"), { id: "c" });
      }));

    // inTransaction is optional for adapters: this runs for those that have it.
    it("inTransaction is true inside a transaction and a nested one, and false outside, after the end, and in after-commit work", () =>
      withStorage(async (storage) => {
        if (!storage.inTransaction) return;
        const seen: Record<string, boolean> = { outside: storage.inTransaction() };
        let leftOver: Promise<void> | undefined;
        await storage.transaction(async () => {
          seen.inside = storage.inTransaction!();
          await storage.transaction(async () => void (seen.nested = storage.inTransaction!()));
          // Async work started in the transaction that runs on after it has ended is outside it.
          leftOver = new Promise((resolve) => setTimeout(resolve, 20)).then(() => void (seen.leftOver = storage.inTransaction!()));
          await storage.afterCommit?.(() => void (seen.afterCommit = storage.inTransaction!()));
        });
        await leftOver;
        seen.after = storage.inTransaction();
        await assert.rejects(storage.transaction(async () => {
          throw new Error("rolled back");
        }));
        seen.afterRollback = storage.inTransaction();
        assert.deepEqual(seen, { outside: false, inside: true, nested: true, leftOver: false, ...(storage.afterCommit ? { afterCommit: false } : {}), after: false, afterRollback: false });
      }));

    // afterCommit is optional for adapters: these run for those that have it.
    it("afterCommit runs work once the transaction has committed, outside it, and transaction() resolves after the work", () =>
      withStorage(async (storage) => {
        if (!storage.afterCommit) return;
        const people = storage.collection<Person>("people");
        const seen: string[] = [];
        await storage.transaction(async () => {
          await people.insert({ id: "a" });
          await storage.afterCommit!(async () => {
            // Outside the transaction: its write is committed, and this write is its own.
            seen.push(`after: ${await people.count()}`);
            await people.insert({ id: "written after" });
          });
          seen.push("inside");
          await people.insert({ id: "b" });
        });
        assert.deepEqual(seen, ["inside", "after: 2"]);
        assert.equal(await people.count(), 3);
        const outside: string[] = [];
        await storage.afterCommit(() => void outside.push("at once"));
        assert.deepEqual(outside, ["at once"]);
      }));

    it("afterCommit drops the work of a transaction that rolls back, and of a nested one that rolls back, and keeps a failed work from failing the commit", () =>
      withStorage(async (storage) => {
        if (!storage.afterCommit) return;
        const people = storage.collection<Person>("people");
        const ran: string[] = [];
        await assert.rejects(
          storage.transaction(async () => {
            await storage.afterCommit!(() => void ran.push("rolled back"));
            throw new Error("boom");
          }),
        );
        await storage.transaction(async () => {
          await storage.afterCommit!(() => {
            throw new Error("work fails");
          });
          await assert.rejects(
            storage.transaction(async () => {
              await storage.afterCommit!(() => void ran.push("nested rolled back"));
              throw new Error("inner");
            }),
          );
          await storage.transaction(async () => {
            await storage.afterCommit!(() => void ran.push("nested kept"));
          });
          await people.insert({ id: "kept" });
        });
        assert.deepEqual(ran, ["nested kept"]);
        assert.equal(await people.count(), 1);
      }));
  });
}
