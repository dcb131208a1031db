import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fakeClock } from "../../adapters/clock/index.ts";
import { manualScheduler } from "../../adapters/scheduler/manual/index.ts";
import { GroupCommit, type JobHandler, type JobRecord, type Storage } from "../../src/index.ts";
import { withCollectionMethod } from "../support/storage-wrappers.ts";
import { kitWithJobs } from "../support/job-kit.ts";
import { localStorages } from "../support/local-storages.ts";

const OUTCOMES = "outcomes";

/** `storage` that records the done marks written to job rows: 1 for a job's own update, n for a statement marking n jobs. */
function notingDoneMarks(storage: Storage): { storage: Storage; doneMarks: number[] } {
  const doneMarks: number[] = [];
  const isDone = (collection: string, patch: unknown) => collection === "reachkit_jobs" && (patch as Partial<JobRecord>).status === "done";
  const singles = withCollectionMethod(storage, "update", (update, collection) => (id, patch, options) => {
    if (isDone(collection, patch)) doneMarks.push(1);
    return update(id, patch, options);
  });
  const noting = withCollectionMethod(singles, "updateWhere", (updateWhere, collection) => async (where, patch) => {
    const marked = await updateWhere(where, patch);
    if (isDone(collection, patch)) doneMarks.push(marked);
    return marked;
  });
  return { storage: noting, doneMarks };
}

const adapters = localStorages("done-marks");

describe("done marks of jobs that finish in one group commit", () => {
  for (const [adapter, makeStorage] of Object.entries(adapters)) {
    it(`${adapter}: are written in one statement with the group's outcomes; a job whose outcome fails is not marked done and runs again`, async () => {
      const { storage, doneMarks } = notingDoneMarks(makeStorage());
      const clock = fakeClock("2026-03-01T00:00:00.000Z");
      const scheduler = manualScheduler(clock);
      const group = new GroupCommit(storage);
      // Each job writes its outcome through the group and marks itself done in that write, as a delivery does.
      const record: JobHandler<string> = (payload, context) =>
        group.participate(() =>
          group.run(async (write) => {
            await storage.collection<{ id: string }>(OUTCOMES).insert({ id: `${payload}#${context.attempt}` });
            await context.markDone(write);
            if (payload === "c" && context.attempt === 1) throw new Error("c's outcome failed after its done mark");
          }),
        );
      const kit = kitWithJobs(() => ({ record }), {
        storage,
        scheduler,
        clock,
        collections: [{ name: OUTCOMES }],
        config: { jobs: { concurrency: 8, backoffBaseMs: 1_000 } },
      });
      await kit.start();
      for (const payload of ["a", "b", "c", "d", "e"]) await kit.jobs.enqueue({ type: "record", payload, runAt: clock.now() + 1_000 });
      await scheduler.advance(1_000);
      const outcomes = async () => (await storage.collection<{ id: string }>(OUTCOMES).find({ orderBy: [{ field: "id" }] })).items.map((outcome) => outcome.id);
      const statuses = async () => (await kit.jobs.list()).map((job) => `${job.payload as string} ${job.status}`);
      assert.deepEqual(await outcomes(), ["a#1", "b#1", "d#1", "e#1"]);
      assert.deepEqual(await statuses(), ["a done", "b done", "c queued", "d done", "e done"]);
      assert.deepEqual(doneMarks, [4], "the four jobs of the group are marked done by one statement");
      await scheduler.advance(1_000);
      assert.deepEqual(await outcomes(), ["a#1", "b#1", "c#2", "d#1", "e#1"]);
      assert.deepEqual(await statuses(), ["a done", "b done", "c done", "d done", "e done"]);
      await kit.stop();
    });
  }
});
