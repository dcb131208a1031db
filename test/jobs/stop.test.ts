import assert from "node:assert/strict";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, it } from "node:test";
import { nodeScheduleScheduler } from "../../adapters/scheduler/node-schedule/index.ts";
import { sqliteStorage } from "../../adapters/storage/sqlite/index.ts";
import { RunLaterError, type JobHandler, type JobRecord } from "../../src/index.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";
import { kitWithJobs } from "../support/job-kit.ts";

describe("stopping the job runner", () => {
  it("with a real-time scheduler, stop ends the jobs that released their slot and wait on a receiver that never answers: they are queued again", { timeout: 30_000 }, async () => {
    const filename = join(temporaryDirectory("jobs-stop"), "kit.db");
    let waiting = 0;
    const kit = kitWithJobs(
      () => ({
        // A request to a receiver that never answers: only the kit's stop (the job's signal) ends it.
        waitsOnReceiver: (async (_payload: null, context) => {
          context.releaseSlot();
          waiting++;
          await new Promise((resolve) => context.signal.addEventListener("abort", resolve, { once: true }));
          throw new RunLaterError(Date.now(), "the kit stopped");
        }) as JobHandler<never>,
      }),
      { storage: sqliteStorage({ filename }), scheduler: nodeScheduleScheduler(), config: { jobs: { concurrency: 1 } } },
    );
    await kit.start();
    for (let n = 0; n < 3; n++) await kit.jobs.enqueue({ type: "waitsOnReceiver", payload: null });
    while (waiting < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    await kit.stop();
    const database = new Database(filename, { readonly: true });
    const jobs = (database.prepare("SELECT doc FROM reachkit_jobs ORDER BY id").pluck().all() as string[]).map((doc) => JSON.parse(doc) as JobRecord);
    database.close();
    assert.deepEqual(jobs.map((job) => [job.status, job.attempts]), [["queued", 0], ["queued", 0], ["queued", 0]]);
  });
});
