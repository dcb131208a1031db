// Every job row writes an entry in each full index of the jobs collection at its insert and moves it at its
// claim and done mark; the sparse ones (key, live key, lease) hold only the rows with a value. Each query the
// job runner and Jobs make must still seek through an index, and each index must serve one of them.
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import Database from "better-sqlite3";
import { fakeClock } from "../../adapters/clock/index.ts";
import { manualScheduler } from "../../adapters/scheduler/manual/index.ts";
import { sqliteStorage } from "../../adapters/storage/sqlite/index.ts";
import { indexName } from "../../adapters/storage/sqlite/schema.ts";
import { scanIn } from "../../bench/servers/baseline-sql.ts";
import { JOBS_COLLECTION, jobsCollection, type JobRecord } from "../../src/jobs/job-record.ts";
import { JobRows } from "../../src/jobs/job-rows.ts";
import { RunLaterError } from "../../src/index.ts";
import { kitWithJobs } from "../support/job-kit.ts";
import { indexesIn, indexesRead, planOf, statementsOn } from "../support/sqlite-plans.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";

const declared = jobsCollection.indexes!.map((index) => indexName(JOBS_COLLECTION, index)).sort();
const SETTINGS = { concurrency: 4, leaseMs: 60_000, backoffBaseMs: 1_000, backoffMaxMs: 60_000 };

describe("the jobs collection's indexes on SQLite", () => {
  it("every query of the runner and of Jobs seeks through an index, each index serves one, and an earlier database gets the sparse ones", async () => {
    const file = join(temporaryDirectory("job-indexes"), "kit.db");
    const earlier = sqliteStorage({ filename: file });
    await earlier.ensureCollections([{ name: JOBS_COLLECTION, indexes: jobsCollection.indexes!.map(({ fields, unique }) => ({ fields, ...(unique ? { unique } : {}) })) }]);
    await earlier.close();

    const storage = sqliteStorage({ filename: file });
    const clock = fakeClock("2026-03-01T00:00:00.000Z");
    const scheduler = manualScheduler(clock);
    let ranLater = false;
    const kit = kitWithJobs(
      () => ({
        plain: async (payload) => {
          if (payload === "fails") throw new Error("fails every time");
        },
        later: async () => {
          if (!ranLater) throw new RunLaterError(clock.now() + 1_000, "not yet");
        },
        laned: { handler: async () => undefined, slots: 2 },
      }),
      { storage, scheduler, clock, config: { jobs: { maxAttempts: 1 } } },
    );
    const statements = await statementsOn(JOBS_COLLECTION, async () => {
      await kit.start();
      const { jobs } = kit;
      await jobs.enqueue({ type: "plain", payload: "a", companyId: "c-1" });
      await jobs.enqueue({ type: "plain", payload: "fails", companyId: "c-1" });
      await jobs.enqueue({ type: "later", payload: "b", companyId: "c-1" });
      await jobs.enqueue({ type: "laned", payload: "c", companyId: "c-1" });
      await jobs.enqueue({ type: "plain", payload: "keyed", key: "k-1", companyId: "c-1", runAt: clock.now() + 60_000 });
      await jobs.enqueue({ type: "plain", payload: "replaced", key: "k-1", replace: true, companyId: "c-1", runAt: clock.now() + 60_000 });
      await jobs.enqueue({ type: "plain", payload: "cancelled", key: "k-2", runAt: clock.now() + 60_000 });
      assert.equal((await jobs.byKey("k-1"))?.payload, "replaced");
      assert.equal(await jobs.cancel("k-2"), true);
      await scheduler.advance(500);
      ranLater = true;
      await scheduler.advance(2_000);
      const [dead] = await jobs.list({ status: "dead" });
      assert.equal(dead?.payload, "fails");
      assert.equal((await jobs.retry(dead!.id))?.status, "queued");
      assert.equal((await jobs.list({ companyId: "c-1", type: "later" }))[0]?.status, "done");
      assert.equal((await jobs.queueStats()).queued, 2);

      // What the runner does with other processes on the database, or after a crash (the manual scheduler's runner
      // does nothing until the clock is advanced).
      const rows = new JobRows(storage.collection<JobRecord>(JOBS_COLLECTION), clock, SETTINGS);
      const now = clock.now();
      let claimed: JobRecord | undefined;
      assert.equal(await rows.claimShared({ where: { lane: null }, room: 1 }, now, (job) => (claimed = job)), false);
      assert.ok(claimed);
      await rows.renewLease(claimed);
      assert.ok((await rows.nextWakeAt()) !== null);
      assert.ok((await rows.earliestQueuedRunAt([{ lane: null }, { lane: "laned" }])) !== null);
      await rows.giveBack(claimed);
      clock.advance(120_000);
      await rows.requeueExpiredLeases();
      await rows.requeueRunning();
      assert.equal(await jobs.deleteWhere({ companyId: "c-1", key: { in: ["k-1"] } }), 1);
      await kit.stop();
    });

    const db = new Database(file, { readonly: true });
    try {
      assert.deepEqual(indexesIn(db, JOBS_COLLECTION), declared);
      const used = new Set<string>();
      for (const sql of statements) {
        assert.equal(scanIn(db, sql), undefined, sql);
        const plan = planOf(db, sql);
        for (const index of indexesRead(plan)) used.add(index);
        // The default lane's jobs are claimed by `lane IS NULL`: that seeks too, or a claim reads past every other
        // lane's due jobs (a sparse index on the lane would leave those jobs out, and (status, runAt) would serve).
        for (const [, field] of (sql.split(" WHERE ")[1] ?? "").matchAll(/"f_(\w+)" IS NULL/g)) {
          assert.ok(plan.some((detail) => detail.includes(`f_${field}=?`)), `${sql}: ${plan.join("; ")}`);
        }
      }
      assert.deepEqual(declared.filter((name) => !used.has(name)), [], "declared indexes that no query of the jobs reads through");
    } finally {
      db.close();
    }
  });
});
