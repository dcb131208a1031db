import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fakeClock } from "../../adapters/clock/index.ts";
import { manualScheduler } from "../../adapters/scheduler/manual/index.ts";
import { nodeScheduleScheduler } from "../../adapters/scheduler/node-schedule/index.ts";
import { sqliteStorage } from "../../adapters/storage/sqlite/index.ts";
import { PermanentJobError, RunLaterError, type JobDefinition, type JobHandler, type JobRecord, type Storage } from "../../src/index.ts";
import { memoryStorage } from "../../adapters/storage/memory/index.ts";
import { withCollectionMethod } from "../support/storage-wrappers.ts";
import { kitWithJobs } from "../support/job-kit.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";
import { waitUntil } from "../support/wait.ts";
import { RELEASED_PER_SLOT } from "../../src/jobs/job-runner.ts";

const HOUR = 3_600_000;

function jobKit(
  handlers: Record<string, JobHandler<never> | JobDefinition<never>>,
  options: { file?: string; clock?: ReturnType<typeof fakeClock>; concurrency?: number; pollMs?: number } = {},
) {
  const clock = options.clock ?? fakeClock("2026-03-01T00:00:00.000Z");
  const scheduler = manualScheduler(clock);
  const kit = kitWithJobs(() => handlers, {
    ...(options.file ? { storage: sqliteStorage({ filename: options.file }) } : {}),
    scheduler,
    clock,
    config: { jobs: { maxAttempts: 3, backoffBaseMs: 1_000, concurrency: options.concurrency ?? 4, pollMs: options.pollMs } },
  });
  return { kit, clock, scheduler };
}

/** A kit of one "work" job type on `storage`, recording the payloads it runs. */
async function recordingKit(storage: Storage, pollMs?: number) {
  const runs: string[] = [];
  const clock = fakeClock("2026-03-01T00:00:00.000Z");
  const scheduler = manualScheduler(clock);
  const kit = kitWithJobs(() => ({ work: async (payload: string) => void runs.push(payload) }), { storage, scheduler, clock, config: { jobs: { concurrency: 4, pollMs } } });
  await kit.start();
  return { kit, clock, scheduler, runs };
}

/**
 * A kit whose storage fails the n-th claiming statement (an update to status "running": one job's, or a bulk
 * claim's) after `failClaim(n)`, answers the next n single claims after `loseClaims(n)` as lost to another
 * process, and counts the claiming statements of each kind.
 */
async function failingClaimKit(pollMs?: number) {
  let failNextClaim = 0;
  let lostClaims = 0;
  const claims = { single: 0, bulk: 0 };
  const failing = (patch: unknown) => {
    const claiming = (patch as Partial<JobRecord>).status === "running";
    if (claiming && --failNextClaim === 0) throw new Error("storage hiccup");
    return claiming;
  };
  const singles = withCollectionMethod(memoryStorage(), "update", (update) => async (id, patch, options) => {
    const claiming = failing(patch);
    if (claiming) claims.single++;
    if (claiming && lostClaims > 0 && lostClaims--) return undefined; // another process won it
    return update(id, patch, options);
  });
  const storage = withCollectionMethod(singles, "updateWhere", (updateWhere) => async (where, patch) => {
    if (failing(patch)) claims.bulk++;
    return updateWhere(where, patch);
  });
  const kit = await recordingKit(storage, pollMs);
  return { ...kit, claims, failClaim: (n: number) => (failNextClaim = n), loseClaims: (n: number) => (lostClaims = n) };
}

/** What a worker that died mid-job leaves behind in a SQLite file: a "work" job running, leased for a minute. */
async function jobLeftRunning(name: string) {
  const file = join(temporaryDirectory(name), "kit.db");
  const clock = fakeClock("2026-03-01T00:00:00.000Z");
  const crashed = jobKit({}, { file, clock });
  await crashed.kit.start();
  const job = await crashed.kit.jobs.enqueue({ type: "work", payload: null });
  await crashed.kit.storage.collection<JobRecord>("reachkit_jobs").update(job.id, { status: "running", attempts: 1, leaseUntil: clock.now() + 60_000 });
  await crashed.kit.stop();
  return { file, clock, job };
}

const FIVE_JOBS = ["job-0", "job-1", "job-2", "job-3", "job-4"];

/** Five jobs due in an hour, then the wake an hour later, whose n-th claiming statement fails. */
async function wakeWithClaimFailing(n: number, pollMs?: number) {
  const claimKit = await failingClaimKit(pollMs);
  const { kit, clock, scheduler, failClaim } = claimKit;
  for (const payload of FIVE_JOBS) await kit.jobs.enqueue({ type: "work", payload, runAt: clock.now() + HOUR });
  failClaim(n);
  await scheduler.advance(HOUR);
  return claimKit;
}

describe("durable jobs", () => {
  it("with pollMs, a runner picks up within that time the jobs another process enqueued on the shared database", async () => {
    const file = join(temporaryDirectory("jobs-poll"), "shared.db");
    const seen: string[] = [];
    const worker = jobKit({ note: async (payload: string) => void seen.push(payload) }, { file, pollMs: 1_000 });
    const other = jobKit({ note: async () => undefined }, { file, clock: worker.clock });
    await worker.kit.start();
    await other.kit.start({ runJobs: false });
    await worker.scheduler.flush(); // the start's first claim
    assert.equal(worker.scheduler.armedAt, worker.clock.now() + 1_000, "armed for the poll with no job known");
    await other.kit.jobs.enqueue({ type: "note", payload: "from the other process" });
    await worker.scheduler.advance(999);
    assert.deepEqual(seen, []);
    await worker.scheduler.advance(1);
    assert.deepEqual(seen, ["from the other process"]);
    await other.kit.stop();
    await worker.kit.stop();
  });

  it("runs a job when it falls due, once, with its payload", async () => {
    const seen: Array<{ payload: unknown; at: number }> = [];
    const { kit, clock, scheduler } = jobKit({ greet: async (payload: { name: string }) => void seen.push({ payload, at: clock.now() }) });
    await kit.start();
    const start = clock.now();
    await kit.jobs.enqueue({ type: "greet", payload: { name: "Ada" }, runAt: start + HOUR });
    await scheduler.advance(HOUR - 1);
    assert.equal(seen.length, 0);
    await scheduler.advance(1);
    assert.deepEqual(seen, [{ payload: { name: "Ada" }, at: start + HOUR }]);
    await scheduler.advance(10 * HOUR);
    assert.equal(seen.length, 1);
    assert.equal((await kit.jobs.list({ status: "done" })).length, 1);
    await kit.stop();
  });

  it("keeps one live job per key: a second enqueue returns it, replace moves it, cancel removes it", async () => {
    const seen: string[] = [];
    const { kit, clock, scheduler } = jobKit({ note: async (payload: string) => void seen.push(payload) });
    await kit.start();
    const now = clock.now();
    const first = await kit.jobs.enqueue({ type: "note", payload: "first", runAt: now + HOUR, key: "k" });
    const again = await kit.jobs.enqueue({ type: "note", payload: "ignored", runAt: now + HOUR, key: "k" });
    assert.equal(again.id, first.id);
    const replaced = await kit.jobs.enqueue({ type: "note", payload: "moved", runAt: now + 2 * HOUR, key: "k", replace: true });
    assert.equal(replaced.id, first.id);
    await scheduler.advance(HOUR);
    assert.deepEqual(seen, [], "the replaced time is honoured");
    await scheduler.advance(HOUR);
    assert.deepEqual(seen, ["moved"]);
    await kit.jobs.enqueue({ type: "note", payload: "later", runAt: clock.now() + HOUR, key: "k" });
    assert.equal(await kit.jobs.cancel("k"), true);
    assert.equal(await kit.jobs.cancel("k"), false);
    await scheduler.advance(2 * HOUR);
    assert.deepEqual(seen, ["moved"]);
    assert.equal((await kit.jobs.list({ status: "cancelled" })).length, 1);
    await kit.stop();
  });

  it("retries a failing job with exponential backoff, then succeeds", async () => {
    const attempts: number[] = [];
    const { kit, clock, scheduler } = jobKit({
      flaky: async (_payload: null, context) => {
        attempts.push(clock.now());
        if (context.attempt < 3) throw new Error(`failure ${context.attempt}`);
      },
    });
    await kit.start();
    const start = clock.now();
    const job = await kit.jobs.enqueue({ type: "flaky", payload: null });
    await scheduler.advance(60_000);
    assert.deepEqual(
      attempts.map((at) => at - start),
      [0, 1_000, 3_000],
    );
    const done = (await kit.jobs.get(job.id)) as JobRecord;
    assert.equal(done.status, "done");
    assert.equal(done.attempts, 3);
    assert.equal(done.lastError, "failure 2");
    await kit.stop();
  });

  it("marks a job dead after its last attempt, visibly, and can queue it again", async () => {
    let calls = 0;
    const { kit, scheduler } = jobKit({
      broken: async () => {
        calls++;
        throw new Error("always broken");
      },
      fatal: async () => {
        throw new PermanentJobError("cannot ever work");
      },
    });
    await kit.start();
    const broken = await kit.jobs.enqueue({ type: "broken", payload: null, key: "b" });
    const fatal = await kit.jobs.enqueue({ type: "fatal", payload: null });
    await scheduler.advance(HOUR);
    assert.equal(calls, 3);
    const dead = await kit.jobs.list({ status: "dead" });
    assert.deepEqual(dead.map((job) => job.id).sort(), [broken.id, fatal.id].sort());
    assert.equal(dead.find((job) => job.id === fatal.id)?.attempts, 1);
    assert.equal(dead.find((job) => job.id === broken.id)?.lastError, "always broken");
    assert.equal(await kit.jobs.byKey("b"), undefined, "a dead job frees its key");
    await kit.jobs.retry(broken.id);
    await scheduler.flush();
    assert.equal(calls, 4);
    await kit.stop();
  });

  it("marks a job of an unknown type dead instead of spinning on it", async () => {
    const { kit, scheduler } = jobKit({});
    await kit.start();
    const job = await kit.jobs.enqueue({ type: "nobody-handles-this", payload: null });
    await scheduler.flush();
    assert.equal((await kit.jobs.get(job.id))?.status, "dead");
    await kit.stop();
  });

  it("survives a restart: a job due in an hour runs exactly once on the next kit of the same SQLite file", async () => {
    const file = join(temporaryDirectory("jobs"), "kit.db");
    const clock = fakeClock("2026-03-01T00:00:00.000Z");
    const runs: string[] = [];
    const handlers = { remind: async (payload: string) => void runs.push(payload) };
    const first = jobKit(handlers, { file, clock });
    await first.kit.start();
    await first.kit.jobs.enqueue({ type: "remind", payload: "in an hour", runAt: clock.now() + HOUR, key: "once" });
    await first.kit.stop();
    const second = jobKit(handlers, { file, clock });
    await second.kit.start();
    await second.scheduler.advance(HOUR + 1);
    await second.scheduler.advance(HOUR);
    assert.deepEqual(runs, ["in an hour"]);
    await second.kit.stop();
  });

  it("takes over a job whose worker died once its lease runs out", async () => {
    const { file, clock, job } = await jobLeftRunning("lease");
    const runs: number[] = [];
    const survivor = jobKit({ work: async () => void runs.push(clock.now()) }, { file, clock });
    await survivor.kit.start();
    await survivor.scheduler.advance(59_999);
    assert.deepEqual(runs, []);
    await survivor.scheduler.advance(1);
    assert.equal(runs.length, 1);
    assert.equal((await survivor.kit.jobs.get(job.id))?.attempts, 2);
    await survivor.kit.stop();
  });

  it("as the sole runner of its storage, queues a job left running by a dead process at once, not when its lease runs out", async () => {
    const { file, clock, job } = await jobLeftRunning("sole");
    const runs: number[] = [];
    const restarted = jobKit({ work: async () => void runs.push(clock.now()) }, { file, clock });
    await restarted.kit.start({ soleJobRunner: true });
    await restarted.scheduler.advance(0);
    assert.deepEqual(runs, [clock.now()], "ran at start");
    const done = await restarted.kit.jobs.get(job.id);
    assert.equal(done?.status, "done");
    assert.equal(done?.attempts, 2, "the run that died counts as an attempt");
    await restarted.scheduler.advance(60_000);
    assert.equal(runs.length, 1, "once");
    await restarted.kit.stop();
  });

  it("alone on its storage, claims a wake's due jobs with one statement, not one per job", async () => {
    const { kit, runs, claims } = await wakeWithClaimFailing(0);
    assert.deepEqual([...runs].sort(), FIVE_JOBS);
    assert.deepEqual(claims, { single: 0, bulk: 1 });
    assert.equal((await kit.jobs.list({ status: "done" })).length, 5);
    await kit.stop();
  });

  it("claims a wake's due jobs all or none: a claim that fails leaves every job queued, and they run once on the retry", async () => {
    const { kit, scheduler, runs } = await wakeWithClaimFailing(1);
    assert.deepEqual(runs, [], "nothing claimed was left running");
    assert.equal((await kit.jobs.list({ status: "queued" })).length, 5);
    await scheduler.advance(5_000); // the runner looks again after a failed wake
    assert.deepEqual([...runs].sort(), FIVE_JOBS);
    await kit.stop();
  });

  it("with pollMs (other processes on the database), claims one job at a time: a claim that fails leaves the jobs won before it running, the rest queued, and each runs once", async () => {
    const { kit, scheduler, runs } = await wakeWithClaimFailing(3, 60_000);
    assert.equal(runs.length, 2, "the two jobs claimed before the failure ran at once, not after their lease");
    assert.equal((await kit.jobs.list({ status: "queued" })).length, 3);
    assert.equal((await kit.jobs.list({ status: "running" })).length, 0);
    await scheduler.advance(5_000);
    assert.deepEqual([...runs].sort(), FIVE_JOBS);
    await kit.stop();
  });

  it("with pollMs, a runner that loses every claim of a wake to other processes keeps waking for the due jobs left", async () => {
    const { kit, clock, scheduler, runs, loseClaims } = await failingClaimKit(60_000);
    // More jobs are due than a wake looks at (4 x its room of 8), and other processes win every one it tries.
    for (let i = 0; i < 40; i++) await kit.jobs.enqueue({ type: "work", payload: `job-${i}`, runAt: clock.now() + HOUR });
    loseClaims(32);
    await scheduler.advance(HOUR);
    await scheduler.advance(60_000);
    assert.equal(runs.length, 40, "with nothing of its own running to wake it, the runner looked again");
    await kit.stop();
  });

  it("arms for a job enqueued while a wake looks for the next due time, even when that look missed it", async () => {
    let stall: { reached: () => void; release: Promise<void> } | undefined;
    // The runner's look for the next queued job answers what it read before the enqueue below committed.
    const storage = withCollectionMethod(memoryStorage(), "findOne", (findOne) => async (where, orderBy) => {
      const found = await findOne(where, orderBy);
      const waiting = stall;
      if ((where as { status?: unknown }).status === "queued" && waiting) {
        stall = undefined;
        waiting.reached();
        await waiting.release;
      }
      return found;
    });
    const { kit, clock, scheduler, runs } = await recordingKit(storage);
    await kit.jobs.enqueue({ type: "work", payload: "now", runAt: clock.now() });
    let release = () => undefined as void;
    const reached = new Promise<void>((resolve) => {
      stall = { reached: resolve, release: new Promise<void>((done) => (release = done)) };
    });
    const waking = scheduler.flush();
    await reached;
    await kit.jobs.enqueue({ type: "work", payload: "in a second", runAt: clock.now() + 1_000 });
    release();
    await waking;
    await scheduler.advance(1_000);
    assert.deepEqual(runs, ["now", "in a second"]);
    await kit.stop();
  });

  it("runs no more jobs at once than its concurrency, and all of them in the end", async () => {
    let running = 0;
    let peak = 0;
    let finished = 0;
    const { kit, scheduler } = jobKit(
      {
        slow: async () => {
          running++;
          peak = Math.max(peak, running);
          await new Promise((resolve) => setImmediate(resolve));
          running--;
          finished++;
        },
      },
      { concurrency: 2 },
    );
    await kit.start();
    for (let i = 0; i < 9; i++) await kit.jobs.enqueue({ type: "slow", payload: i });
    await scheduler.flush();
    assert.equal(finished, 9);
    assert.equal(peak, 2);
    await kit.stop();
  });

  it("runs a type with slots of its own in them: its jobs waiting on a remote service leave the runner's slots to the others", async () => {
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const remote: number[] = [];
    const local: number[] = [];
    const { kit, scheduler } = jobKit(
      {
        remote: { handler: async (payload: number) => void (remote.push(payload), await answered), slots: 2 },
        local: async (payload: number) => void local.push(payload),
      },
      { concurrency: 1 },
    );
    await kit.start();
    for (let i = 0; i < 4; i++) await kit.jobs.enqueue({ type: "remote", payload: i });
    await kit.jobs.enqueue({ type: "local", payload: 9 });
    const running = scheduler.flush();
    for (let turn = 0; turn < 100 && local.length === 0; turn++) await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(local, [9], "the local job ran while the remote ones waited");
    assert.deepEqual(remote, [0, 1], "two remote jobs at once, in their two slots");
    answer();
    await running;
    await scheduler.flush();
    assert.deepEqual(remote, [0, 1, 2, 3]);
    assert.equal((await kit.jobs.list({ status: "done" })).length, 5);
    await kit.stop();
  });

  it("with a real-time scheduler and a backlog of a type with slots of its own, claims its jobs half a set of slots or more at a time, not as each job ends; the runner's idle slots do not wake it", { timeout: 30_000 }, async () => {
    const claimed: number[] = [];
    const storage = withCollectionMethod(memoryStorage(), "updateWhere", (updateWhere) => async (where, patch) => {
      const claims = await updateWhere(where, patch);
      if ((patch as Partial<JobRecord>).status === "running") claimed.push(claims);
      return claims;
    });
    let ran = 0;
    // Each job waits for its answer, which the test gives one job at a time.
    const answers: Array<() => void> = [];
    const remote = async () => {
      await new Promise<void>((resolve) => answers.push(resolve));
      ran++;
    };
    const kit = kitWithJobs(() => ({ remote: { handler: remote, slots: 4 } }), { storage, scheduler: nodeScheduleScheduler(), config: { jobs: { concurrency: 2 } } });
    await kit.start();
    // In one transaction: the runner hears of them once all are queued.
    await kit.storage.transaction(async () => {
      for (let i = 0; i < 40; i++) await kit.jobs.enqueue({ type: "remote", payload: i });
    });
    for (let answered = 0; answered < 40; answered++) {
      await waitUntil("a job waiting for its answer", () => answers.length > 0);
      answers.shift()!();
      await waitUntil("the answered job's end", () => ran === answered + 1);
      // Time for a wake, were one armed.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await kit.stop();
    // Room for twice its 4 slots at the first wake, then half a set's worth (or more) each time: never a claim per job.
    assert.equal(claimed.reduce((sum, claims) => sum + claims, 0), 40);
    assert.deepEqual(claimed.slice(0, -1).filter((claims) => claims < 2), [], `claims: ${claimed.join(", ")}`);
  });

  it("arms for a job of the runner's slots due later while another type's slots have a backlog waiting on a remote service", async () => {
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const local: number[] = [];
    const { kit, clock, scheduler } = jobKit({ remote: { handler: async () => void (await answered), slots: 1 }, local: async (payload: number) => void local.push(payload) });
    await kit.start();
    for (let i = 0; i < 3; i++) await kit.jobs.enqueue({ type: "remote", payload: i });
    const dueAt = clock.now() + 1_000;
    await kit.jobs.enqueue({ type: "local", payload: 9, runAt: dueAt });
    const running = scheduler.flush();
    for (let turn = 0; turn < 100 && scheduler.armedAt === null; turn++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(scheduler.armedAt, dueAt, "the alarm is set for the local job, not left to the remote slots' backlog");
    answer();
    await running;
    await scheduler.advance(1_000);
    assert.deepEqual(local, [9]);
    await kit.stop();
  });

  it("refuses slots that are not a whole number of at least 1", () => {
    for (const slots of [0, -1, 1.5, Number.NaN, Infinity]) {
      assert.throws(() => jobKit({ work: { handler: async () => undefined, slots } }), /job type "work": slots must be a whole number of at least 1/);
    }
  });

  it("runs jobs that a job enqueues for a later time within the same advance", async () => {
    const trail: string[] = [];
    const { kit, clock, scheduler } = jobKit({
      first: async () => {
        trail.push(`first@${clock.now()}`);
        await kit.jobs.enqueue({ type: "second", payload: null, runAt: clock.now() + 1_000 });
      },
      second: async () => void trail.push(`second@${clock.now()}`),
    });
    await kit.start();
    const start = clock.now();
    await kit.jobs.enqueue({ type: "first", payload: null, runAt: start + 500 });
    await scheduler.advance(10_000);
    assert.deepEqual(trail, [`first@${start + 500}`, `second@${start + 1_500}`]);
    await kit.stop();
  });

  it("a handler that releases its slot lets the runner run other jobs meanwhile; it still finishes, and stop waits for it", async () => {
    let release!: () => void;
    const receiverAnswers = new Promise<void>((resolve) => (release = resolve));
    const trail: string[] = [];
    const { kit, scheduler } = jobKit(
      {
        waitsOnReceiver: async (_payload, context) => {
          context.releaseSlot();
          await receiverAnswers;
          trail.push("slow done");
        },
        quick: async (n: number) => void trail.push(`quick ${n}`),
      },
      { concurrency: 1 },
    );
    await kit.start();
    await kit.jobs.enqueue({ type: "waitsOnReceiver", payload: null });
    for (let n = 1; n <= 3; n++) await kit.jobs.enqueue({ type: "quick", payload: n });
    const flushing = scheduler.flush();
    // With one slot, the quick jobs run only because the slow one gave its slot back.
    while (trail.length < 3) await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(trail, ["quick 1", "quick 2", "quick 3"]);
    assert.deepEqual((await kit.jobs.list({ status: "running" })).map((job) => job.type), ["waitsOnReceiver"]);
    let stopped = false;
    const stopping = kit.stop().then(() => (stopped = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(stopped, false, "stop waits for the job that released its slot");
    release();
    await Promise.all([flushing, stopping]);
    assert.deepEqual(trail, ["quick 1", "quick 2", "quick 3", "slow done"]);
  });

  it("claims no more while the jobs that released their slot number RELEASED_PER_SLOT times the concurrency, and goes on as they finish", async () => {
    let release!: () => void;
    const receiverAnswers = new Promise<void>((resolve) => (release = resolve));
    let started = 0;
    const { kit, scheduler } = jobKit(
      {
        waitsOnReceiver: async (_payload, context) => {
          started++;
          context.releaseSlot();
          await receiverAnswers;
        },
      },
      { concurrency: 1 },
    );
    await kit.start();
    for (let n = 0; n < RELEASED_PER_SLOT + 4; n++) await kit.jobs.enqueue({ type: "waitsOnReceiver", payload: null });
    const flushing = scheduler.flush();
    while (started < RELEASED_PER_SLOT) await new Promise((resolve) => setImmediate(resolve));
    // The runner waits without claiming: timers still fire (it does not spin), and no further job starts.
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setTimeout(resolve, 1));
    assert.equal(started, RELEASED_PER_SLOT);
    release();
    await flushing;
    assert.equal(started, RELEASED_PER_SLOT + 4);
    assert.equal((await kit.jobs.list({ status: "done", limit: 1_000 })).length, RELEASED_PER_SLOT + 4);
    await kit.stop();
  });

  it("with a real-time scheduler, every wake that waits for jobs that released their slot settles when they finish: stop resolves", { timeout: 30_000 }, async () => {
    let release!: () => void;
    const receiverAnswers = new Promise<void>((resolve) => (release = resolve));
    let started = 0;
    let finished = 0;
    const putOff = new Set<number>();
    const kit = kitWithJobs(
      () => ({
        waitsOnReceiver: (async (n: number, context) => {
          // Put off once, each job to its own time: each comes back in a wake of its own.
          if (!putOff.has(n)) {
            putOff.add(n);
            throw new RunLaterError(Date.now() + 40 * n, "later");
          }
          started++;
          context.releaseSlot();
          await receiverAnswers;
          finished++;
        }) as JobHandler<never>,
      }),
      { scheduler: nodeScheduleScheduler(), config: { jobs: { concurrency: 1 } } },
    );
    await kit.start();
    for (let n = 1; n <= 5; n++) await kit.jobs.enqueue({ type: "waitsOnReceiver", payload: n });
    while (started < 5) await new Promise((resolve) => setTimeout(resolve, 5));
    release();
    await kit.stop();
    assert.equal(finished, 5);
  });

  it("with a real-time scheduler, a chain of jobs that each enqueue the next leaves the event loop to others between them", { timeout: 30_000 }, async () => {
    const CHAIN = 200;
    let ran = 0;
    let ranWhenTimerFired: number | undefined;
    const kit = kitWithJobs(
      ({ jobs }) => ({
        // Like a scan that reads a page per job: each job queues the next, due at once.
        page: (async (n: number) => {
          ran++;
          if (n < CHAIN) await jobs.enqueue({ type: "page", payload: n + 1 });
        }) as JobHandler<never>,
      }),
      { scheduler: nodeScheduleScheduler() },
    );
    await kit.start();
    await kit.jobs.enqueue({ type: "page", payload: 1 });
    // A timer stands for an HTTP request or any other work of the process: it must not wait for the whole chain.
    setTimeout(() => (ranWhenTimerFired = ran), 0);
    await waitUntil("the chain's end", () => ran === CHAIN, 20_000);
    await kit.stop();
    assert.ok(ranWhenTimerFired !== undefined && ranWhenTimerFired < CHAIN, `the timer fired after ${String(ranWhenTimerFired)} of ${CHAIN} jobs`);
  });

  it("a handler that throws RunLaterError runs again at the time it names, without using an attempt", async () => {
    const runs: number[] = [];
    const { kit, clock, scheduler } = jobKit({
      later: async () => {
        runs.push(clock.now());
        // More runs than the kit's three attempts: none of the deferred ones counts.
        if (runs.length <= 4) throw new RunLaterError(clock.now() + 7 * HOUR, "receiver busy");
      },
    });
    await kit.start();
    const start = clock.now();
    await kit.jobs.enqueue({ type: "later", payload: null });
    await scheduler.advance(7 * HOUR - 1);
    assert.deepEqual(runs, [start]);
    await scheduler.advance(1);
    assert.deepEqual(runs, [start, start + 7 * HOUR]);
    await scheduler.advance(3 * 7 * HOUR);
    assert.equal(runs.length, 5);
    const [done] = await kit.jobs.list({ status: "done" });
    assert.equal(done?.attempts, 1);
    await kit.stop();
  });

  it("lets a running job finish when the kit stops", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let handlerDone = false;
    const { kit, scheduler } = jobKit({
      waits: async () => {
        await gate;
        handlerDone = true;
      },
    });
    await kit.start();
    await kit.jobs.enqueue({ type: "waits", payload: null });
    const flushing = scheduler.flush();
    await new Promise((resolve) => setImmediate(resolve));
    let doneWhenStopped: boolean | undefined;
    const stopping = kit.stop().then(() => (doneWhenStopped = handlerDone));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(doneWhenStopped, undefined, "stop waits for the running job");
    release();
    await Promise.all([flushing, stopping]);
    assert.equal(doneWhenStopped, true);
  });
});
