import assert from "node:assert/strict";
import { join } from "node:path";
import { it } from "node:test";
import { nodeScheduleScheduler } from "../../adapters/scheduler/node-schedule/index.ts";
import { sqliteStorage } from "../../adapters/storage/sqlite/index.ts";
import type { JobContext, Reachkit } from "../../src/index.ts";
import { kitWithJobs } from "../support/job-kit.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";
import { waitUntil } from "../support/wait.ts";

const BACKLOG = 2_000;

it("starts without first working through a backlog of queued jobs: the server listens while the backlog is worked", { timeout: 120_000 }, async () => {
  const file = join(temporaryDirectory("start-with-backlog"), "db.sqlite");
  let kit: Reachkit | undefined;
  let done = 0;
  // Each job queues a later one, as an opt-in queues its text: what kept a start busy until the backlog was gone.
  const handlers = () => ({
    work: async (_payload: number, _context: JobContext) => {
      await kit!.jobs.enqueue({ type: "later", payload: 0, runAt: Date.now() + 3_600_000 });
      done++;
    },
    later: async () => undefined,
  });
  const filling = kitWithJobs(handlers, { storage: sqliteStorage({ filename: file }), scheduler: nodeScheduleScheduler() });
  await filling.start({ runJobs: false });
  await filling.storage.transaction(async () => {
    for (let i = 0; i < BACKLOG; i++) await filling.jobs.enqueue({ type: "work", payload: i });
  });
  await filling.stop();

  kit = kitWithJobs(handlers, { storage: sqliteStorage({ filename: file }), scheduler: nodeScheduleScheduler() });
  try {
    await kit.start();
    assert.ok(done < BACKLOG / 2, `${done} of ${BACKLOG} jobs were done before the start resolved`);
    await waitUntil("the whole backlog done", () => done === BACKLOG, 100_000);
  } finally {
    await kit.stop();
  }
});
