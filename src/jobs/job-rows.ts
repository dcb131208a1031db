import { ConcurrentChangeError } from "../kernel/concurrent-changes.ts";
import type { Clock } from "../ports/clock.ts";
import type { Logger } from "../ports/logger.ts";
import type { Collection, Where } from "../ports/storage.ts";
import type { JobRunnerSettings } from "./job-definition.ts";
import { PermanentJobError, RunLaterError, type JobRecord } from "./job-record.ts";

/** With several processes: how many times its room a runner looks at, to claim among them from a random start. */
const CLAIM_WINDOW = 4;

/** Which jobs a set of slots claims (`JobDefinition.slots`), and up to how many tasks now. */
export interface ClaimRequest {
  where: Where<JobRecord>;
  room: number;
}

/**
 * The job rows' moves, each a conditional update fenced by the job's status
 * and attempt number, so several processes on one database never run the same
 * job twice at once and a worker that lost its lease cannot overwrite the new
 * owner's result: queued → running (a claim), running → queued (given back,
 * retried, run later, or a lease that ran out), running → done | dead.
 */
export class JobRows {
  constructor(
    private readonly jobs: Collection<JobRecord>,
    private readonly clock: Clock,
    private readonly settings: JobRunnerSettings,
  ) {}

  /**
   * Claims due jobs in order for up to `room` tasks: a job of a type with a batch size joins the task
   * of the job before it while that one is of its type and has room, so batches are runs of consecutive
   * jobs and every job starts after those due before it. `more` tells that due jobs were left. For a
   * runner alone on its storage, in the transaction of its wake: each page of due jobs is claimed with
   * one statement (per attempt count among them), not one per job.
   */
  async claimInBatches(request: ClaimRequest, now: number, batchSizeOf: (type: string) => number, largestBatch: number): Promise<{ tasks: JobRecord[][]; more: boolean }> {
    const { where, room } = request;
    const tasks: JobRecord[][] = [];
    let page = room;
    let after: string | undefined;
    for (;;) {
      const due = await this.jobs.find({ where: { ...where, status: "queued", runAt: { lte: now } }, orderBy: [{ field: "runAt" }], limit: page, after });
      const chosen: JobRecord[] = [];
      let full = false;
      for (const job of due.items) {
        const open = tasks.at(-1);
        const joins = open !== undefined && open[0]!.type === job.type && open.length < batchSizeOf(job.type);
        if (!joins && tasks.length === room) {
          full = true;
          break;
        }
        if (joins) open.push(job);
        else tasks.push([job]);
        chosen.push(job);
      }
      const claimed = await this.claimAll(chosen, now);
      const tried = new Set(chosen);
      // A job claimed meanwhile by someone else leaves its task (none is while the runner is alone on its storage).
      for (let index = tasks.length - 1; index >= 0; index--) {
        const task = tasks[index]!.flatMap((job) => claimed.get(job.id) ?? (tried.has(job) ? [] : [job]));
        if (task.length > 0) tasks[index] = task;
        else tasks.splice(index, 1);
      }
      if (full) return { tasks, more: true };
      if (due.nextCursor === undefined) return { tasks, more: false };
      after = due.nextCursor;
      // Past the first page the due jobs are filling a batch: read them a batch at a time.
      page = Math.max(room, largestBatch);
    }
  }

  /**
   * Claims jobs read as queued: one conditional update per attempt count among them, fenced as `claim` is
   * (status and attempt number), then one read of the rows won. Returns them by id.
   */
  async claimAll(jobs: readonly JobRecord[], now: number): Promise<Map<string, JobRecord>> {
    if (jobs.length === 0) return new Map();
    const leaseUntil = now + this.settings.leaseMs;
    for (const [attempts, ids] of idsByAttempts(jobs)) {
      await this.jobs.updateWhere({ id: { in: ids }, status: "queued", attempts }, { status: "running", attempts: attempts + 1, leaseUntil, updatedAt: now });
    }
    const read = await this.jobs.find({ where: { id: { in: jobs.map((job) => job.id) } }, limit: jobs.length });
    const attemptsBefore = new Map(jobs.map((job) => [job.id, job.attempts]));
    const won = read.items.filter((job) => job.status === "running" && job.leaseUntil === leaseUntil && job.attempts === attemptsBefore.get(job.id)! + 1);
    return new Map(won.map((job) => [job.id, job]));
  }

  /**
   * With other processes on the database, every one sees the same oldest due jobs: each looks at a wider
   * window and tries it from a random starting point, so they rarely race for one row. Returns whether
   * the room was filled with due jobs left over.
   */
  async claimShared(request: ClaimRequest, now: number, won: (job: JobRecord) => void): Promise<boolean> {
    const { where, room } = request;
    const due = await this.jobs.find({ where: { ...where, status: "queued", runAt: { lte: now } }, orderBy: [{ field: "runAt" }], limit: room * CLAIM_WINDOW });
    const start = Math.floor(Math.random() * due.items.length);
    let claims = 0;
    let tried = 0;
    for (; tried < due.items.length && claims < room; tried++) {
      const claim = await this.claim(due.items[(start + tried) % due.items.length]!, now);
      if (!claim) continue; // another worker won it
      claims++;
      won(claim);
    }
    // A backlog waits for a job of its own to finish and wake the runner: only with a full queue. Claims
    // lost to other processes leave room, and the runner re-arms for the due jobs left as usual (the stall
    // of the three-process test: a runner that lost every claim of a wake waited for a job it did not have).
    return claims === room && (due.nextCursor !== undefined || tried < due.items.length);
  }

  /** A running job whose lease ran out belongs to a worker that died: queue it again. Returns now. */
  async requeueExpiredLeases(): Promise<number> {
    const now = this.clock.now();
    await this.jobs.updateWhere({ status: "running", leaseUntil: { lte: now } }, { status: "queued", leaseUntil: null, updatedAt: now });
    return now;
  }

  /** Jobs left running by a process that stopped without finishing them (a kill): queued again. Returns how many. */
  requeueRunning(): Promise<number> {
    const now = this.clock.now();
    return this.jobs.updateWhere({ status: "running" }, { status: "queued", leaseUntil: null, updatedAt: now });
  }

  /** Fenced by the attempt number: undefined when another worker claimed the job first. */
  claim(job: JobRecord, now: number): Promise<JobRecord | undefined> {
    return this.jobs.update(
      job.id,
      { status: "running", attempts: job.attempts + 1, leaseUntil: now + this.settings.leaseMs, updatedAt: now },
      { where: { status: "queued", attempts: job.attempts } },
    );
  }

  /** A claimed job that never started (the kit stopped first): queued again, its attempt given back. */
  async giveBack(job: JobRecord): Promise<void> {
    await this.jobs.update(
      job.id,
      { status: "queued", attempts: job.attempts - 1, leaseUntil: null, updatedAt: this.clock.now() },
      { where: { status: "running", attempts: job.attempts } },
    );
  }

  /** Keeps a running job's claim while its handler works. */
  async renewLease(job: JobRecord): Promise<void> {
    await this.jobs.update(job.id, { leaseUntil: this.clock.now() + this.settings.leaseMs }, { where: { status: "running", attempts: job.attempts } });
  }

  /** When the runner must wake next: the next queued job's due time, or the next lease to run out. */
  async nextWakeAt(): Promise<number | null> {
    const [nextQueued, nextLease] = await Promise.all([
      this.jobs.findOne({ status: "queued" }, [{ field: "runAt" }]),
      this.jobs.findOne({ status: "running", leaseUntil: { exists: true } }, [{ field: "leaseUntil" }]),
    ]);
    const times = [nextQueued?.runAt, nextLease?.leaseUntil ?? undefined].filter((t): t is number => t !== undefined);
    return times.length > 0 ? Math.min(...times) : null;
  }

  /** The earliest run time of a queued job of these lanes, if any (not a retry's due time: see row-drains' `nextDueAt`). */
  async earliestQueuedRunAt(lanes: readonly Where<JobRecord>[]): Promise<number | null> {
    const next = await Promise.all(lanes.map((lane) => this.jobs.findOne({ ...lane, status: "queued" }, [{ field: "runAt" }])));
    const times = next.flatMap((job) => (job ? [job.runAt] : []));
    return times.length > 0 ? Math.min(...times) : null;
  }

  /**
   * A handler threw: the job is dead, queued again after its backoff, or (RunLaterError) queued for later
   * without using an attempt. A handler whose fenced write found its read overtaken by another transaction
   * (ConcurrentChangeError) runs again at once on what is stored now, without using an attempt either: that
   * other transaction committed, so the next run sees it. Returns when it is due again, if it is.
   */
  async failed(job: JobRecord, error: unknown, logger: Logger): Promise<number | undefined> {
    if (error instanceof ConcurrentChangeError) error = new RunLaterError(this.clock.now(), error.message);
    if (error instanceof RunLaterError) {
      logger.debug("job runs later", { reason: error.message, runAt: new Date(error.runAt).toISOString() });
      await this.jobs.update(
        job.id,
        { status: "queued", attempts: job.attempts - 1, leaseUntil: null, runAt: error.runAt, updatedAt: this.clock.now() },
        { where: { status: "running", attempts: job.attempts } },
      );
      return error.runAt;
    }
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof PermanentJobError || job.attempts >= job.maxAttempts) {
      await this.finish(job, "dead", message, logger);
      return undefined;
    }
    const runAt = this.clock.now() + backoffMs(this.settings, job.attempts);
    logger.warn("job failed; will retry", { error, runAt: new Date(runAt).toISOString() });
    await this.jobs.update(
      job.id,
      { status: "queued", leaseUntil: null, lastError: message, runAt, updatedAt: this.clock.now() },
      { where: { status: "running", attempts: job.attempts } },
    );
    return runAt;
  }

  /** Marks running jobs done: one conditional update per attempt count among them, fenced as `finish` is. */
  async finishAll(jobs: readonly JobRecord[]): Promise<void> {
    const now = this.clock.now();
    // A job's lastError stays as stored: `finish` writes the value its claim read, which is the stored one.
    for (const [attempts, ids] of idsByAttempts(jobs)) {
      await this.jobs.updateWhere({ id: { in: ids }, status: "running", attempts }, { status: "done", activeKey: null, leaseUntil: null, updatedAt: now, finishedAt: now });
    }
  }

  async finish(job: JobRecord, status: "done" | "dead", error: string | null, logger: Logger): Promise<void> {
    const now = this.clock.now();
    if (status === "dead") logger.error("job is dead", { error });
    await this.jobs.update(
      job.id,
      { status, activeKey: null, leaseUntil: null, lastError: error ?? job.lastError, updatedAt: now, finishedAt: now },
      // Fenced by the attempt number: a worker that lost its lease cannot overwrite the new owner's result.
      { where: { status: "running", attempts: job.attempts } },
    );
  }
}

/** The wait after failed attempt number `attempt` (1 for the first): doubling from the base, at most the max. */
export function backoffMs(settings: Pick<JobRunnerSettings, "backoffBaseMs" | "backoffMaxMs">, attempt: number): number {
  return Math.min(settings.backoffMaxMs, settings.backoffBaseMs * 2 ** (attempt - 1));
}

/** The ids of `jobs` by their attempt count: one fenced statement per count (almost always one). */
function idsByAttempts(jobs: readonly JobRecord[]): Map<number, string[]> {
  const byAttempts = new Map<number, string[]>();
  for (const job of jobs) {
    const ids = byAttempts.get(job.attempts);
    if (ids) ids.push(job.id);
    else byAttempts.set(job.attempts, [job.id]);
  }
  return byAttempts;
}
