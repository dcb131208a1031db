import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import Database from "better-sqlite3";
import { fakeClock } from "../../adapters/clock/index.ts";
import { manualScheduler } from "../../adapters/scheduler/manual/index.ts";
import { sqliteStorage } from "../../adapters/storage/sqlite/index.ts";
import type { BatchedJob, JobRecord, Storage, Where } from "../../src/index.ts";
import { withCollectionMethod } from "../support/storage-wrappers.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";
import { kitWithJobs } from "../support/job-kit.ts";
import { localStorages } from "../support/local-storages.ts";

const NOTES = "notes";

interface BatchHandlerKitOptions {
  storage?: Storage;
  /** Payloads whose work fails on their first attempt, after the notes of the batch were written. */
  failFirst?: string[];
  /** Called inside the batch handler once its notes are written, before it returns. */
  midBatch?: () => void;
}

/**
 * A kit with one job type, "note", batches of 3 through a batchHandler: it writes a note per job in one
 * upsertMany and, once committed, logs "committed:<payload>". Its handler for a job alone does the same
 * for one. The log says which of them ran: "batch:a,b,c" or "alone:a".
 */
async function batchHandlerKit(options: BatchHandlerKitOptions = {}) {
  const log: string[] = [];
  const clock = fakeClock("2026-03-01T00:00:00.000Z");
  const scheduler = manualScheduler(clock);
  const write = async (storage: Storage, jobs: ReadonlyArray<Pick<BatchedJob<string>, "payload" | "attempt">>) => {
    await storage.collection<{ id: string }>(NOTES).upsertMany(jobs.map((job) => ({ id: `${job.payload}#${job.attempt}` })));
    const failing = jobs.find((job) => options.failFirst?.includes(job.payload) && job.attempt === 1);
    if (failing) throw new Error(`${failing.payload} failed`);
    options.midBatch?.();
    for (const job of jobs) await storage.afterCommit!(() => void log.push(`committed:${job.payload}`));
  };
  const kit = kitWithJobs(
    ({ storage }) => ({
      note: {
        batchSize: 3,
        handler: async (payload: string, context) => {
          log.push(`alone:${payload}`);
          await write(storage, [{ payload, attempt: context.attempt }]);
        },
        batchHandler: async (jobs: readonly BatchedJob<string>[]) => {
          log.push(`batch:${jobs.map((job) => job.payload).join(",")}`);
          await write(storage, jobs);
          return jobs.map((job) => ({ note: job.payload }));
        },
      },
    }),
    { ...(options.storage ? { storage: options.storage } : {}), scheduler, clock, collections: [{ name: NOTES }], config: { jobs: { concurrency: 1, backoffBaseMs: 1_000 } } },
  );
  await kit.start();
  const enqueue = async (...payloads: string[]) => {
    for (const payload of payloads) await kit.jobs.enqueue({ type: "note", payload, runAt: clock.now() + 1_000 });
  };
  const notes = async () => (await kit.storage.collection<{ id: string }>(NOTES).find({ orderBy: [{ field: "id" }] })).items.map((n) => n.id);
  const statuses = async () => (await kit.jobs.list()).map((job) => `${job.payload as string} ${job.status}`);
  return { kit, scheduler, log, enqueue, notes, statuses };
}

const adapters = localStorages("job-batch-handler");

describe("a job type's batchHandler (JobDefinition.batchHandler)", () => {
  for (const [adapter, storage] of Object.entries(adapters)) {
    it(`${adapter}: is called once per claimed batch of two jobs or more, with the batch's jobs in due order, and each job is done when the batch commits; a batch of one runs through handler`, async () => {
      const { kit, scheduler, log, enqueue, notes, statuses } = await batchHandlerKit({ storage: storage() });
      await enqueue("a", "b", "c", "d", "e", "f", "g");
      await scheduler.advance(1_000);
      assert.deepEqual(log, [
        "batch:a,b,c", "committed:a", "committed:b", "committed:c",
        "batch:d,e,f", "committed:d", "committed:e", "committed:f",
        "alone:g", "committed:g",
      ]);
      assert.deepEqual(await notes(), ["a#1", "b#1", "c#1", "d#1", "e#1", "f#1", "g#1"]);
      assert.deepEqual(await statuses(), ["a done", "b done", "c done", "d done", "e done", "f done", "g done"]);
      await kit.stop();
    });

    it(`${adapter}: when one job's work fails, the batch runs again one job at a time: the others' writes commit, the failing job's attempt is counted with its error and it runs again after its backoff`, async () => {
      const { kit, scheduler, log, enqueue, notes, statuses } = await batchHandlerKit({ storage: storage(), failFirst: ["b"] });
      await enqueue("a", "b", "c");
      await scheduler.advance(1_000);
      // The batch's notes (a#1, b#1, c#1 in one write) were rolled back with its savepoint, and its work after commit dropped.
      assert.deepEqual(log, ["batch:a,b,c", "alone:a", "alone:b", "alone:c", "committed:a", "committed:c"]);
      assert.deepEqual(await notes(), ["a#1", "c#1"]);
      assert.deepEqual(await statuses(), ["a done", "b queued", "c done"]);
      const [failed] = await kit.jobs.list({ status: "queued" });
      assert.equal(failed?.lastError, "b failed");
      assert.equal(failed?.attempts, 1);
      await scheduler.advance(999);
      assert.equal(log.length, 6, "b waits for its backoff");
      await scheduler.advance(1);
      assert.deepEqual(log.slice(6), ["alone:b", "committed:b"], "a batch of one job runs through handler");
      assert.deepEqual(await notes(), ["a#1", "b#2", "c#1"]);
      assert.deepEqual(await statuses(), ["a done", "b done", "c done"]);
      await kit.stop();
    });
  }

  it("marks the batch's jobs done in its transaction only: before the commit another connection sees none of its writes nor done marks, and a failed commit leaves every job queued to run again", async () => {
    const filename = join(temporaryDirectory("job-batch-handler-commit"), "kit.db");
    const seenMidBatch: string[] = [];
    const reader = () => new Database(filename, { readonly: true });
    let failDone = true;
    const storage = withCollectionMethod(sqliteStorage({ filename }), "updateWhere", (updateWhere) => async (where, patch) => {
      if ((patch as Partial<JobRecord>).status === "done" && failDone) {
        failDone = false;
        assert.equal(((where as Where<JobRecord>).id as { in: string[] }).in.length, 3, "one statement marks the batch's jobs done");
        throw new Error("disk full");
      }
      return updateWhere(where, patch);
    });
    const { kit, scheduler, log, enqueue, notes, statuses } = await batchHandlerKit({
      storage,
      midBatch: () => {
        // What a crash at this point would leave: the state of the last commit.
        const db = reader();
        const notesStored = db.prepare(`SELECT count(*) FROM "${NOTES}"`).pluck().get() as number;
        const jobs = db.prepare(`SELECT "f_status" FROM reachkit_jobs ORDER BY id`).pluck().all() as string[];
        db.close();
        seenMidBatch.push(`notes ${notesStored}, jobs ${jobs.join(" ")}`);
      },
    });
    await enqueue("a", "b", "c");
    await scheduler.advance(1_000);
    assert.deepEqual(seenMidBatch, ["notes 0, jobs running running running"]);
    assert.deepEqual(log, ["batch:a,b,c"], "the commit failed: nothing after it ran");
    assert.deepEqual(await notes(), []);
    assert.deepEqual(await statuses(), ["a queued", "b queued", "c queued"]);
    await scheduler.advance(1_000);
    assert.deepEqual(await notes(), ["a#2", "b#2", "c#2"]);
    assert.deepEqual(await statuses(), ["a done", "b done", "c done"]);
    await kit.stop();
  });

  it("is refused on a type that does not run in batches", () => {
    assert.throws(
      () => kitWithJobs(() => ({ work: { handler: async () => undefined, batchHandler: async () => undefined } }), { scheduler: manualScheduler(fakeClock()) }),
      /job type "work": a batchHandler needs a batchSize of at least 2/,
    );
  });
});
