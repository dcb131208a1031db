import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { describe, it } from "node:test";
import { fakeClock } from "../../adapters/clock/index.ts";
import { manualScheduler } from "../../adapters/scheduler/manual/index.ts";
import { RunLaterError, type JobHandler, type JobRecord, type Storage } from "../../src/index.ts";
import { withCollectionMethod, wrapStorage } from "../support/storage-wrappers.ts";
import { kitWithJobs } from "../support/job-kit.ts";
import { localStorages } from "../support/local-storages.ts";

const HOUR = 3_600_000;

/**
 * `storage` that notes, for every job row put back in the queue, the commit that wrote it: the number of
 * its outermost transaction, or 0 for a write outside any (a commit of its own).
 */
function notingPutBacks(storage: Storage): { storage: Storage; putBackCommits: number[] } {
  const transactions = new AsyncLocalStorage<number>();
  let opened = 0;
  const putBackCommits: number[] = [];
  const counted = wrapStorage(storage, {
    transaction: (fn) => (transactions.getStore() !== undefined ? storage.transaction(fn) : transactions.run(++opened, () => storage.transaction(fn))),
  });
  const noting = withCollectionMethod(counted, "update", (update, collection) => (id, patch, options) => {
    if (collection === "reachkit_jobs" && (patch as Partial<JobRecord>).status === "queued") putBackCommits.push(transactions.getStore() ?? 0);
    return update(id, patch, options);
  });
  return { storage: noting, putBackCommits };
}

const adapters = localStorages("put-backs");

describe("jobs put back to run later", () => {
  for (const [adapter, makeStorage] of Object.entries(adapters)) {
    it(`${adapter}: the jobs of one wake that throw RunLaterError are put back in one commit, and each runs again at its time`, async () => {
      const { storage, putBackCommits } = notingPutBacks(makeStorage());
      const clock = fakeClock("2026-03-01T00:00:00.000Z");
      const scheduler = manualScheduler(clock);
      const runs: string[] = [];
      const kit = kitWithJobs(
        () => ({
          // A receiver with no room on the first run: back in an hour.
          later: (async (payload: string, context) => {
            runs.push(`${payload}@${context.attempt}`);
            if (runs.filter((run) => run.startsWith(`${payload}@`)).length === 1) throw new RunLaterError(clock.now() + HOUR, "no room yet");
          }) as JobHandler<never>,
        }),
        { storage, scheduler, clock, config: { jobs: { concurrency: 4 } } },
      );
      await kit.start();
      for (const payload of ["a", "b", "c", "d"]) await kit.jobs.enqueue({ type: "later", payload });
      await scheduler.advance(0);
      assert.deepEqual(runs, ["a@1", "b@1", "c@1", "d@1"]);
      assert.equal(putBackCommits.length, 4);
      assert.ok(putBackCommits.every((commit) => commit !== 0 && commit === putBackCommits[0]), `put back in commits ${putBackCommits.join(", ")}, not one`);
      const queued = await kit.jobs.list({ status: "queued" });
      assert.deepEqual(queued.map((job) => [job.payload, job.runAt, job.attempts]), ["a", "b", "c", "d"].map((payload) => [payload, clock.now() + HOUR, 0]));

      await scheduler.advance(HOUR);
      assert.deepEqual(runs.slice(4), ["a@1", "b@1", "c@1", "d@1"]);
      assert.equal((await kit.jobs.list({ status: "done" })).length, 4);
      await kit.stop();
    });
  }
});
