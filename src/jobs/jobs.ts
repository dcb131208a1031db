import { sortableId } from "../kernel/ids.ts";
import { defineToken } from "../kernel/token.ts";
import type { Clock } from "../ports/clock.ts";
import type { Logger } from "../ports/logger.ts";
import type { Scheduler } from "../ports/scheduler.ts";
import { UniqueConstraintError, type Collection, type Storage, type Where } from "../ports/storage.ts";
import { JOBS_COLLECTION, type JobRecord, type JobStatus } from "./job-record.ts";
import type { JobDefinition, JobHandler, JobRunnerSettings } from "./job-definition.ts";
import { JobRunner } from "./job-runner.ts";
import { backoffMs } from "./job-rows.ts";

/** Attempts and their backoff, as the jobs count them. */
export interface Retries {
  maxAttempts: number;
  /** The wait after failed attempt number `attempt` (1 for the first). */
  backoffMs(attempt: number): number;
}

export interface EnqueueOptions<P> {
  type: string;
  payload: P;
  /** Epoch ms; default now. */
  runAt?: number;
  /** At most one live (queued or running) job per key. */
  key?: string;
  /**
   * With a key that already has a live job: false (default) keeps the existing
   * job and returns it; true replaces its payload and time (a running job keeps
   * running, and the new one is queued beside it).
   */
  replace?: boolean;
  /**
   * With a key that already has a queued job due later than `runAt`: moves that job to `runAt` (its
   * payload stays), so the job runs by the earlier of the two times. A running job is left as it is.
   */
  earlier?: boolean;
  maxAttempts?: number;
  companyId?: string;
}

export interface JobListOptions {
  status?: JobStatus;
  type?: string;
  companyId?: string;
  limit?: number;
}

export interface JobQueueStats {
  queued: number;
  due: number;
  running: number;
  dead: number;
  /** Epoch ms; undefined when no job is due. */
  oldestDueAt?: number;
}

export interface JobSettings extends JobRunnerSettings {
  maxAttempts: number;
}

export const DEFAULT_JOB_SETTINGS: JobSettings = {
  concurrency: 4,
  leaseMs: 60_000,
  maxAttempts: 5,
  backoffBaseMs: 1_000,
  backoffMaxMs: 3_600_000,
};

/**
 * Durable jobs: enqueued in Storage with a run-at time and an optional key,
 * run at least once by the runner (lease + retry with backoff), marked dead
 * after `maxAttempts`. Handlers must be idempotent.
 */
export class Jobs {
  readonly #jobs: Collection<JobRecord>;
  readonly #runner: JobRunner;
  readonly #starting: Array<() => Promise<unknown>> = [];

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    scheduler: Scheduler,
    logger: Logger,
    private readonly settings: JobSettings,
  ) {
    this.#jobs = storage.collection<JobRecord>(JOBS_COLLECTION);
    this.#runner = new JobRunner(this.#jobs, clock, scheduler, logger, settings, (work) => storage.transaction(work));
  }

  /** Whether other processes run jobs on this storage (`pollMs`): what one process knows of the queue is not all of it. */
  get sharesStorage(): boolean {
    return this.settings.pollMs !== undefined;
  }

  /** How many attempts a job makes by default, and the wait after a failed one: for work that keeps its own attempts. */
  get retries(): Retries {
    return { maxAttempts: this.settings.maxAttempts, backoffMs: (attempt) => backoffMs(this.settings, attempt) };
  }

  /** Registers the handler of a job type (or the handler and its batch size). One handler per type. */
  register<P>(type: string, job: JobHandler<P> | JobDefinition<P>): void {
    this.#runner.register(type, (typeof job === "function" ? { handler: job } : job) as JobDefinition<unknown>);
  }

  async enqueue<P>(options: EnqueueOptions<P>): Promise<JobRecord> {
    const now = this.clock.now();
    const runAt = options.runAt ?? now;
    // Without a key it is one insert, atomic alone: no transaction (inside the caller's, no savepoint) of its own.
    const job = options.key === undefined ? await this.#jobs.insert(this.#newJob(options, runAt, now)) : await this.#enqueueKeyed(options, options.key, runAt, now);
    await this.#notifyOnceCommitted(job.runAt);
    return job;
  }

  #enqueueKeyed<P>(options: EnqueueOptions<P>, key: string, runAt: number, now: number): Promise<JobRecord> {
    return this.storage.transaction(async () => {
      const existing = await this.#jobs.findOne({ activeKey: key });
      if (existing && options.earlier && existing.status === "queued" && runAt < existing.runAt) {
        return (await this.#jobs.update(existing.id, { runAt, updatedAt: now }, { where: { status: "queued" } })) ?? existing;
      }
      if (existing && !options.replace) return existing;
      if (existing) {
        const replaced = await this.#jobs.update(
          existing.id,
          { type: options.type, lane: this.#runner.laneOf(options.type), payload: options.payload, runAt, updatedAt: now, companyId: options.companyId ?? null },
          { where: { status: "queued" } },
        );
        if (replaced) return replaced;
        // It is running: it keeps running under no key, and the replacement is queued.
        await this.#jobs.update(existing.id, { activeKey: null, updatedAt: now });
      }
      try {
        return await this.#jobs.insert(this.#newJob(options, runAt, now));
      } catch (error) {
        if (!(error instanceof UniqueConstraintError)) throw error;
        const raced = await this.#jobs.findOne({ activeKey: key });
        if (!raced) throw error;
        return raced;
      }
    });
  }

  #newJob<P>(options: EnqueueOptions<P>, runAt: number, now: number): JobRecord {
    const lane = this.#runner.laneOf(options.type);
    return {
      id: sortableId(now),
      type: options.type,
      ...(lane !== undefined ? { lane } : {}),
      key: options.key ?? null,
      activeKey: options.key ?? null,
      companyId: options.companyId ?? null,
      payload: options.payload,
      status: "queued",
      runAt,
      attempts: 0,
      maxAttempts: options.maxAttempts ?? this.settings.maxAttempts,
      leaseUntil: null,
      lastError: null,
      createdAt: now,
      updatedAt: now,
      finishedAt: null,
    };
  }

  /**
   * Tells the runner of a due time once the job is committed: after the caller's transaction when there
   * is one. Where transactions run side by side (PostgreSQL), a runner told before would claim the due
   * jobs without this one (not committed yet) and arm past it: it would wait for the next wake.
   */
  async #notifyOnceCommitted(runAt: number): Promise<void> {
    const notify = () => this.#runner.notifyDue(runAt);
    if (this.storage.afterCommit) await this.storage.afterCommit(notify);
    else notify();
  }

  /** Cancels the queued job with this key. False when there is none (or it is already running). */
  async cancel(key: string): Promise<boolean> {
    const live = await this.#jobs.findOne({ activeKey: key });
    if (!live) return false;
    const now = this.clock.now();
    const cancelled = await this.#jobs.update(
      live.id,
      { status: "cancelled", activeKey: null, updatedAt: now, finishedAt: now },
      { where: { status: "queued" } },
    );
    return cancelled !== undefined;
  }

  get(id: string): Promise<JobRecord | undefined> {
    return this.#jobs.get(id);
  }

  /** The live job of a key, if any. */
  byKey(key: string): Promise<JobRecord | undefined> {
    return this.#jobs.findOne({ activeKey: key });
  }

  async list(options: JobListOptions = {}): Promise<JobRecord[]> {
    const where: Where<JobRecord> = {};
    if (options.status) where.status = options.status;
    if (options.type) where.type = options.type;
    if (options.companyId) where.companyId = options.companyId;
    const page = await this.#jobs.find({ where, orderBy: [{ field: "id" }], limit: options.limit ?? 1000 });
    return page.items;
  }

  /**
   * The queue as the metrics show it: jobs queued (due or later), due now and
   * waiting, running, dead, and when the oldest due job became due. Each is one
   * indexed query (status, runAt).
   */
  async queueStats(): Promise<JobQueueStats> {
    const now = this.clock.now();
    const [queued, due, running, dead, oldestDue] = await Promise.all([
      this.#jobs.count({ status: "queued" }),
      this.#jobs.count({ status: "queued", runAt: { lte: now } }),
      this.#jobs.count({ status: "running" }),
      this.#jobs.count({ status: "dead" }),
      this.#jobs.find({ where: { status: "queued", runAt: { lte: now } }, orderBy: [{ field: "runAt" }], limit: 1 }),
    ]);
    return { queued, due, running, dead, oldestDueAt: oldestDue.items[0]?.runAt };
  }

  /** Puts a dead or cancelled job back in the queue, due now, with a fresh attempt budget. */
  async retry(id: string): Promise<JobRecord | undefined> {
    const now = this.clock.now();
    const job = await this.#jobs.get(id);
    if (!job || (job.status !== "dead" && job.status !== "cancelled")) return undefined;
    const revived = await this.#jobs.update(
      id,
      { status: "queued", attempts: 0, runAt: now, activeKey: job.key, updatedAt: now, finishedAt: null },
      { where: { status: job.status } },
    );
    if (revived) await this.#notifyOnceCommitted(now);
    return revived;
  }

  /** Deletes jobs of a company matching `where` (privacy purges). */
  deleteWhere(where: Where<JobRecord>): Promise<number> {
    return this.#jobs.deleteWhere(where);
  }

  /**
   * Starts running due jobs (the CLI never calls it). `requeueRunning`: this is
   * the only runner of the storage, so jobs still marked running belong to a
   * process that died; they run again now rather than when their lease expires.
   */
  async start(options: { requeueRunning?: boolean } = {}): Promise<void> {
    await this.#runner.start(options.requeueRunning ?? false);
    for (const work of this.#starting) await work();
  }

  /**
   * Work for every start, once the runner runs and the jobs of a dead process are queued again: the
   * drains arm those left without a live job (RowDrains.rearm).
   */
  whenStarting(work: () => Promise<unknown>): void {
    this.#starting.push(work);
  }

  /** Stops taking jobs and waits for running ones to finish. */
  stop(): Promise<void> {
    return this.#runner.stop();
  }
}

export const JOBS = defineToken<Jobs>("Jobs", ["reachkit core (always bound)"]);
