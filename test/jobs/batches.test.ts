import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fakeClock } from "../../adapters/clock/index.ts";
import { manualScheduler } from "../../adapters/scheduler/manual/index.ts";
import { memoryStorage } from "../../adapters/storage/memory/index.ts";
import type { JobContext, JobRecord, Storage, Where } from "../../src/index.ts";
import { withCollectionMethod } from "../support/storage-wrappers.ts";
import { kitWithJobs } from "../support/job-kit.ts";
import { localStorages } from "../support/local-storages.ts";

const NOTES = "notes";

interface BatchKitOptions {
  storage?: Storage;
  batchSize?: number;
  /** Payloads whose handler throws on their first attempt, after writing their note. */
  failFirst?: string[];
  pollMs?: number;
}

/**
 * A kit with one batched job type, "note": its handler stores a note named by the payload and, once
 * committed, logs "committed:<payload>"; "other" is a plain type. The runner runs one task at a time, so
 * the order of the log is the order of the work.
 */
async function batchKit(options: BatchKitOptions = {}) {
  const log: string[] = [];
  const clock = fakeClock("2026-03-01T00:00:00.000Z");
  const scheduler = manualScheduler(clock);
  const note = async (storage: Storage, payload: string, context: JobContext) => {
    log.push(`run:${payload}`);
    await storage.collection<{ id: string }>(NOTES).insert({ id: `${payload}#${context.attempt}` });
    if (options.failFirst?.includes(payload) && context.attempt === 1) throw new Error(`${payload} failed`);
    await storage.afterCommit!(() => void log.push(`committed:${payload}`));
  };
  const kit = kitWithJobs(
    ({ storage }) => ({
      note: { handler: (payload: string, context) => note(storage, payload, context), batchSize: options.batchSize ?? 2 },
      other: async (payload: string) => void log.push(`run:${payload}`),
    }),
    { ...(options.storage ? { storage: options.storage } : {}), scheduler, clock, collections: [{ name: NOTES }], config: { jobs: { concurrency: 1, backoffBaseMs: 1_000, pollMs: options.pollMs } } },
  );
  await kit.start();
  const enqueue = async (...jobs: Array<[type: string, payload: string]>) => {
    for (const [type, payload] of jobs) await kit.jobs.enqueue({ type, payload, runAt: clock.now() + 1_000 });
  };
  const notes = async () => (await kit.storage.collection<{ id: string }>(NOTES).find({ orderBy: [{ field: "id" }] })).items.map((n) => n.id);
  const statuses = async () => (await kit.jobs.list()).map((job) => `${job.payload as string} ${job.status}`);
  return { kit, clock, scheduler, log, enqueue, notes, statuses };
}

const adapters = localStorages("job-batches");

describe("batched job types (JobDefinition.batchSize)", () => {
  for (const [adapter, storage] of Object.entries(adapters)) {
    it(`${adapter}: runs jobs due one after another in batches of batchSize, each job's committed work after its batch commits, a plain job in due order between them`, async () => {
      const { kit, scheduler, log, enqueue, notes, statuses } = await batchKit({ storage: storage() });
      await enqueue(["note", "a"], ["note", "b"], ["note", "c"], ["other", "x"], ["note", "d"], ["note", "e"], ["note", "f"]);
      await scheduler.advance(1_000);
      assert.deepEqual(log, [
        "run:a", "run:b", "committed:a", "committed:b",
        "run:c", "committed:c",
        "run:x",
        "run:d", "run:e", "committed:d", "committed:e",
        "run:f", "committed:f",
      ]);
      assert.deepEqual(await notes(), ["a#1", "b#1", "c#1", "d#1", "e#1", "f#1"]);
      assert.deepEqual(await statuses(), ["a done", "b done", "c done", "x done", "d done", "e done", "f done"]);
      await kit.stop();
    });

    it(`${adapter}: a job that throws in a batch undoes its own writes only, never runs its committed work, and runs again alone after its backoff`, async () => {
      const { kit, scheduler, log, enqueue, notes, statuses } = await batchKit({ storage: storage(), batchSize: 3, failFirst: ["b"] });
      await enqueue(["note", "a"], ["note", "b"], ["note", "c"]);
      await scheduler.advance(1_000);
      assert.deepEqual(log, ["run:a", "run:b", "run:c", "committed:a", "committed:c"]);
      assert.deepEqual(await notes(), ["a#1", "c#1"]);
      assert.deepEqual(await statuses(), ["a done", "b queued", "c done"]);
      assert.equal((await kit.jobs.list({ status: "queued" }))[0]?.lastError, "b failed");
      await scheduler.advance(999);
      assert.equal(log.length, 5, "b waits for its backoff");
      await scheduler.advance(1);
      assert.deepEqual(log.slice(5), ["run:b", "committed:b"]);
      assert.deepEqual(await notes(), ["a#1", "b#2", "c#1"]);
      assert.deepEqual(await statuses(), ["a done", "b done", "c done"]);
      await kit.stop();
    });
  }

  it("a job is done exactly when its writes are committed: the batch's done marks are one statement, and when it fails the batch's notes are undone too and its jobs run again", async () => {
    let failDone = true;
    const doneMarks: number[] = [];
    const storage = withCollectionMethod(memoryStorage(), "updateWhere", (updateWhere) => async (where, patch) => {
      if ((patch as Partial<JobRecord>).status === "done") {
        doneMarks.push(((where as Where<JobRecord>).id as { in: string[] }).in.length);
        if (failDone) {
          failDone = false;
          throw new Error("disk full");
        }
      }
      return updateWhere(where, patch);
    });
    const { kit, scheduler, log, enqueue, notes, statuses } = await batchKit({ storage });
    await enqueue(["note", "a"], ["note", "b"]);
    await scheduler.advance(1_000);
    assert.deepEqual(log, ["run:a", "run:b"]);
    assert.deepEqual(await notes(), []);
    assert.deepEqual(await statuses(), ["a queued", "b queued"]);
    await scheduler.advance(1_000);
    assert.deepEqual(await notes(), ["a#2", "b#2"]);
    assert.deepEqual(await statuses(), ["a done", "b done"]);
    assert.deepEqual(doneMarks, [2, 2], "one statement marks the batch's two jobs done");
    await kit.stop();
  });

  it("with other processes on the storage (pollMs), a batched type's jobs run one at a time, each committed before its work after commit", async () => {
    const { kit, scheduler, log, enqueue, statuses } = await batchKit({ pollMs: 60_000 });
    await enqueue(["note", "a"], ["note", "b"]);
    await scheduler.advance(1_000);
    // Runners sharing a database claim from a random point of the due jobs: either may go first.
    const first = log[0] === "run:a" ? "a" : "b";
    const second = first === "a" ? "b" : "a";
    assert.deepEqual(log, [`run:${first}`, `committed:${first}`, `run:${second}`, `committed:${second}`]);
    assert.deepEqual(await statuses(), ["a done", "b done"]);
    await kit.stop();
  });

  it("refuses a batch size that is not a whole number of at least 1", () => {
    for (const batchSize of [0, -1, 1.5, Number.NaN, Infinity]) {
      assert.throws(
        () =>
          kitWithJobs(() => ({ work: { handler: async () => undefined, batchSize } }), { scheduler: manualScheduler(fakeClock()) }),
        /job type "work": batchSize must be a whole number of at least 1/,
      );
    }
  });
});
