import PQueue from "p-queue";
import type { Clock } from "../ports/clock.ts";
import type { Logger } from "../ports/logger.ts";
import type { Scheduler } from "../ports/scheduler.ts";
import type { Collection, Where } from "../ports/storage.ts";
import { PermanentJobError, RunLaterError, type JobRecord } from "./job-record.ts";

export interface JobContext {
  job: JobRecord;
  /** 1 on the first run. */
  attempt: number;
  logger: Logger;
  /** Aborted when the kit stops; long handlers may stop early and be retried. */
  signal: AbortSignal;
  /**
   * Runs `work` once what the handler wrote is committed (domain events go
   * here): at once, or, for a job run in a batch (`JobDefinition.batchSize`),
   * after the batch's transaction commits, and not at all if the job's writes
   * are undone.
   */
  whenCommitted(work: () => void | Promise<void>): Promise<void>;
  /**
   * Marks the job done at once, in the caller's transaction, for a handler
   * that commits its outcome in a transaction of its own (beside the outcomes
   * of other jobs): the job's end commits with it. Called last; the runner
   * then leaves the job as it is.
   */
  markDone(): Promise<void>;
}

/** What a job did, in counts and names (an upload's lines, products saved, errors): logged with its outcome. */
export type JobOutcome = Readonly<Record<string, string | number | boolean>>;

export type JobHandler<P> = (payload: P, context: JobContext) => Promise<void | JobOutcome>;

/** A job type's handler, and whether its jobs run in batches. */
export interface JobDefinition<P> {
  handler: JobHandler<P>;
  /**
   * Up to this many jobs of this type, due one after the other, run one
   * after another in one storage transaction, each marked done in it
   * (default 1: each job alone, marked done after its handler). One commit
   * for the batch instead of two or more per job; a job whose handler throws
   * undoes its own writes only (a savepoint) and is retried alone. For
   * handlers whose work is storage reads and writes: the batch holds the
   * storage until it commits, so a handler must not wait on anything else (a
   * network call). Batches form when the runner is alone on its storage (no
   * `pollMs`); with other processes each job runs in a transaction of its
   * own, with its done mark.
   */
  batchSize?: number;
  /**
   * Jobs of this type run in slots of their own, this many at once, beside
   * the runner's `concurrency`: for jobs that wait on a remote service (a
   * provider's answer), so that a slow service holds these slots only and
   * every other job keeps moving.
   */
  slots?: number;
}

export interface JobRunnerSettings {
  /** Jobs running at once in this process. */
  concurrency: number;
  /** How long a claim holds before another worker may take the job over; renewed while it runs. */
  leaseMs: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  /**
   * With several processes on one database: wake at least this often, so jobs
   * that another process enqueued (or left behind when it died) are claimed
   * here too. Unset, the runner wakes only for the jobs it knows of, which is
   * every job when it is the only process.
   */
  pollMs?: number;
}

/** With several processes: how many times its room a runner looks at, to claim among them from a random start. */
const CLAIM_WINDOW = 4;

/** Slots that run jobs, and which jobs they claim: the runner's own (every type without slots of its own), or one type's. */
interface Lane {
  queue: PQueue;
  concurrency: number;
  where: Where<JobRecord>;
}

/**
 * Claims due jobs with a conditional update (so several processes on one
 * database never run the same job twice at once), runs them through p-queue,
 * and arms the scheduler for the next due time: one alarm, never a timer per job.
 */
export class JobRunner {
  readonly #types = new Map<string, Required<Omit<JobDefinition<unknown>, "slots">>>();
  /** The runner's own slots first, then those of each type that has its own. */
  readonly #lanes: Lane[];
  /** Claimed but not started yet: given back if the kit stops first. */
  readonly #claimed = new Map<string, JobRecord>();
  readonly #abort = new AbortController();
  #started = false;
  #stopping = false;
  #ticking: Promise<void> | null = null;
  #tickAgain = false;
  #armedAt: number | null = null;
  /** More jobs were due than the queue had room for; a finishing job wakes the runner again. */
  #backlog = false;

  constructor(
    private readonly jobs: Collection<JobRecord>,
    private readonly clock: Clock,
    private readonly scheduler: Scheduler,
    private readonly logger: Logger,
    private readonly settings: JobRunnerSettings,
    /** Runs a batch of claims atomically (the storage's transaction): one commit per tick, not one per job. */
    private readonly atomically: <R>(work: () => Promise<R>) => Promise<R>,
  ) {
    this.#lanes = [{ queue: new PQueue({ concurrency: settings.concurrency }), concurrency: settings.concurrency, where: { lane: null } }];
  }

  register(type: string, definition: JobDefinition<unknown>): void {
    if (this.#types.has(type)) throw new Error(`a handler for job type "${type}" is already registered`);
    const batchSize = definition.batchSize ?? 1;
    if (!Number.isSafeInteger(batchSize) || batchSize < 1) throw new RangeError(`job type "${type}": batchSize must be a whole number of at least 1, got ${String(batchSize)}`);
    if (definition.slots !== undefined) this.#addLane(type, definition.slots);
    this.#types.set(type, { handler: definition.handler, batchSize });
  }

  #addLane(type: string, slots: number): void {
    if (!Number.isSafeInteger(slots) || slots < 1) throw new RangeError(`job type "${type}": slots must be a whole number of at least 1, got ${String(slots)}`);
    this.#lanes.push({ queue: new PQueue({ concurrency: slots }), concurrency: slots, where: { lane: type } });
  }

  /** The lane a job of this type is stored with: its type when it has slots of its own. */
  laneOf(type: string): string | undefined {
    return this.#lanes.some((lane) => lane.where.lane === type) ? type : undefined;
  }

  #whenIdle(): Promise<unknown> {
    return Promise.all(this.#lanes.map((lane) => lane.queue.onIdle()));
  }

  async start(requeueRunning: boolean): Promise<void> {
    if (requeueRunning) {
      const now = this.clock.now();
      const requeued = await this.jobs.updateWhere({ status: "running" }, { status: "queued", leaseUntil: null, updatedAt: now });
      if (requeued > 0) this.logger.warn("jobs left running by a process that stopped without finishing them are queued again", { jobs: requeued });
    }
    this.#started = true;
    this.scheduler.start(() => this.#wake());
    await this.#tick();
  }

  /** A job became due at `runAt`: arm earlier if needed. */
  notifyDue(runAt: number): void {
    if (!this.#started || this.#stopping) return;
    // A tick under way may have read the queue before this job was committed and then arm past it (and
    // past #armedAt, which still holds the alarm that woke it): it looks again before it ends.
    if (this.#ticking) this.#tickAgain = true;
    if (this.#armedAt === null || runAt < this.#armedAt) this.#arm(runAt);
  }

  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    await this.scheduler.stop();
    for (const lane of this.#lanes) lane.queue.clear();
    await this.#ticking;
    const now = this.clock.now();
    for (const job of this.#claimed.values()) {
      await this.jobs.update(
        job.id,
        { status: "queued", attempts: job.attempts - 1, leaseUntil: null, updatedAt: now },
        { where: { status: "running", attempts: job.attempts } },
      );
    }
    this.#claimed.clear();
    this.#abort.abort();
    await this.#whenIdle();
  }

  async #wake(): Promise<void> {
    await this.#tick();
    await this.#whenIdle();
  }

  #tick(): Promise<void> {
    if (this.#ticking) {
      this.#tickAgain = true;
      return this.#ticking;
    }
    this.#ticking = (async () => {
      try {
        do {
          this.#tickAgain = false;
          if (this.#stopping) return;
          await this.#claimDue();
          await this.#rearm();
        } while (this.#tickAgain);
      } catch (error) {
        this.logger.error("job runner tick failed; retrying in 5 s", { error });
        this.#arm(this.clock.now() + 5_000);
      } finally {
        this.#ticking = null;
      }
    })();
    return this.#ticking;
  }

  async #claimDue(): Promise<void> {
    this.#backlog = false;
    const open: Array<{ lane: Lane; room: number }> = [];
    for (const lane of this.#lanes) {
      const room = lane.concurrency * 2 - lane.queue.size - lane.queue.pending;
      if (room > 0) open.push({ lane, room });
      else this.#backlog = true;
    }
    if (open.length === 0) return;
    if (!this.#sharesStorage) {
      // Alone on its storage, the runner claims a wake's jobs in one transaction: one commit, and a failed
      // claim leaves every job queued.
      const tasks: Array<{ lane: Lane; task: JobRecord[] }> = [];
      await this.atomically(async () => {
        const now = await this.#requeueExpiredLeases();
        for (const { lane, room } of open) for (const task of await this.#claimInBatches(lane, room, now)) tasks.push({ lane, task });
      });
      tasks.forEach(({ lane, task }) => this.#start(lane, task));
    } else {
      // With other processes on the database, each claim is a statement of its own and its job starts at
      // once (a failed claim leaves the jobs won before it running here). A transaction would hold the row
      // locks of its claims until it commits: the other processes' claims of the same rows would wait on
      // them, and every other storage call of theirs would wait behind their own open claim transaction.
      const now = await this.#requeueExpiredLeases();
      for (const { lane, room } of open) await this.#claimShared(lane, room, now, (job) => this.#start(lane, [job]));
    }
  }

  /** Other processes run jobs on the same database: the runner is told to poll for what they enqueue. */
  get #sharesStorage(): boolean {
    return this.settings.pollMs !== undefined;
  }

  #start(lane: Lane, task: JobRecord[]): void {
    for (const job of task) this.#claimed.set(job.id, job);
    const type = this.#types.get(task[0]!.type);
    void lane.queue.add(() => (type && type.batchSize > 1 ? this.#executeBatch(type.handler, task) : this.#execute(task[0]!)));
  }

  /**
   * Claims due jobs in order for up to `room` tasks: a job of a type with a batch size joins the task
   * of the job before it while that one is of its type and has room, so batches are runs of consecutive
   * jobs and every job starts after those due before it.
   */
  async #claimInBatches(lane: Lane, room: number, now: number): Promise<JobRecord[][]> {
    const tasks: JobRecord[][] = [];
    let page = room;
    let after: string | undefined;
    for (;;) {
      const due = await this.jobs.find({ where: { ...lane.where, status: "queued", runAt: { lte: now } }, orderBy: [{ field: "runAt" }], limit: page, after });
      for (const job of due.items) {
        const open = tasks.at(-1);
        const joins = open !== undefined && open[0]!.type === job.type && open.length < (this.#types.get(job.type)?.batchSize ?? 1);
        if (!joins && tasks.length === room) {
          this.#backlog = true;
          return tasks;
        }
        const claim = await this.#claim(job, now);
        if (!claim) continue;
        if (joins) open.push(claim);
        else tasks.push([claim]);
      }
      if (due.nextCursor === undefined) return tasks;
      after = due.nextCursor;
      // Past the first page the due jobs are filling a batch: read them a batch at a time.
      page = Math.max(room, ...[...this.#types.values()].map((type) => type.batchSize));
    }
  }

  async #claimShared(lane: Lane, room: number, now: number, won: (job: JobRecord) => void): Promise<void> {
    // With other processes on the database, every one sees the same oldest due jobs: each looks at a wider
    // window and tries it from a random starting point, so they rarely race for one row.
    const due = await this.jobs.find({
      where: { ...lane.where, status: "queued", runAt: { lte: now } },
      orderBy: [{ field: "runAt" }],
      limit: room * CLAIM_WINDOW,
    });
    const start = Math.floor(Math.random() * due.items.length);
    let claims = 0;
    let tried = 0;
    for (; tried < due.items.length && claims < room; tried++) {
      const claim = await this.#claim(due.items[(start + tried) % due.items.length]!, now);
      if (!claim) continue; // another worker won it
      claims++;
      won(claim);
    }
    // A backlog waits for a job of its own to finish and wake the runner: only with a full queue. Claims
    // lost to other processes leave room, and the runner re-arms for the due jobs left as usual (the stall
    // of the three-process test: a runner that lost every claim of a wake waited for a job it did not have).
    if (claims === room && (due.nextCursor !== undefined || tried < due.items.length)) this.#backlog = true;
  }

  /** A running job whose lease ran out belongs to a worker that died: queue it again. Returns now. */
  async #requeueExpiredLeases(): Promise<number> {
    const now = this.clock.now();
    await this.jobs.updateWhere({ status: "running", leaseUntil: { lte: now } }, { status: "queued", leaseUntil: null, updatedAt: now });
    return now;
  }

  /** Fenced by the attempt number: undefined when another worker claimed the job first. */
  #claim(job: JobRecord, now: number): Promise<JobRecord | undefined> {
    return this.jobs.update(
      job.id,
      { status: "running", attempts: job.attempts + 1, leaseUntil: now + this.settings.leaseMs, updatedAt: now },
      { where: { status: "queued", attempts: job.attempts } },
    );
  }

  async #rearm(): Promise<void> {
    if (this.#backlog) return;
    const [nextQueued, nextLease] = await Promise.all([
      this.jobs.findOne({ status: "queued" }, [{ field: "runAt" }]),
      this.jobs.findOne({ status: "running", leaseUntil: { exists: true } }, [{ field: "leaseUntil" }]),
    ]);
    const times = [nextQueued?.runAt, nextLease?.leaseUntil ?? undefined].filter((t): t is number => t !== undefined);
    this.#arm(times.length > 0 ? Math.min(...times) : null);
  }

  #arm(at: number | null): void {
    const { pollMs } = this.settings;
    if (pollMs !== undefined) {
      const poll = this.clock.now() + pollMs;
      if (at === null || poll < at) at = poll;
    }
    this.#armedAt = at;
    this.scheduler.arm(at);
  }

  async #execute(job: JobRecord): Promise<void> {
    this.#claimed.delete(job.id);
    const logger = this.#loggerOf(job);
    const handler = this.#types.get(job.type)?.handler;
    if (!handler) return this.#finish(job, "dead", `no handler registered for job type "${job.type}"`, logger);
    if (job.attempts > job.maxAttempts) return this.#finish(job, "dead", "lease expired on every attempt", logger);
    const heartbeat = setInterval(() => {
      void this.jobs
        .update(job.id, { leaseUntil: this.clock.now() + this.settings.leaseMs }, { where: { status: "running", attempts: job.attempts } })
        .catch((error: unknown) => logger.warn("lease renewal failed", { error }));
    }, Math.max(1_000, this.settings.leaseMs / 3));
    heartbeat.unref();
    const started = performance.now();
    let markedDone = false;
    const markDone = async () => {
      await this.#finish(job, "done", null, logger);
      markedDone = true;
    };
    try {
      const outcome = await handler(job.payload, this.#context(job, logger, async (work) => void (await work()), markDone));
      logger.info("job done", { ...outcome, ms: Math.round(performance.now() - started) });
      if (!markedDone) await this.#finish(job, "done", null, logger);
    } catch (error) {
      await this.#failed(job, error, logger);
    } finally {
      clearInterval(heartbeat);
      this.#wakeForBacklog();
    }
  }

  /**
   * Runs a batch in one storage transaction: each job in a savepoint of its own, marked done in it, so a
   * job is done exactly when its writes are committed. Its lease is not renewed: the batch holds the
   * storage until it commits, so a renewal could only land after it.
   */
  async #executeBatch(handler: JobHandler<unknown>, batch: readonly JobRecord[]): Promise<void> {
    for (const job of batch) this.#claimed.delete(job.id);
    let committed: Array<() => void | Promise<void>> = [];
    let failures: Array<{ job: JobRecord; error: unknown }> = [];
    try {
      await this.atomically(async () => {
        for (const job of batch) {
          const logger = this.#loggerOf(job);
          if (job.attempts > job.maxAttempts) {
            await this.#finish(job, "dead", "lease expired on every attempt", logger);
            continue;
          }
          const afterCommit: Array<() => void | Promise<void>> = [];
          const started = performance.now();
          try {
            const outcome = await this.atomically(async () => {
              const finish = () => this.#finish(job, "done", null, logger);
              const outcome = await handler(job.payload, this.#context(job, logger, async (work) => void afterCommit.push(work), finish));
              // Fenced by the job's status: a handler that marked it done already leaves nothing to write.
              await finish();
              return outcome;
            });
            const ms = Math.round(performance.now() - started);
            committed.push(() => logger.info("job done", { ...outcome, ms }), ...afterCommit);
          } catch (error) {
            failures.push({ job, error });
          }
        }
      });
    } catch (error) {
      // The commit failed: nothing of the batch was stored, and every job of it runs again.
      committed = [];
      failures = batch.map((job) => ({ job, error }));
    }
    for (const work of committed) {
      try {
        await work();
      } catch (error) {
        this.logger.error("work after a job's commit failed", { error });
      }
    }
    for (const { job, error } of failures) await this.#failed(job, error, this.#loggerOf(job));
    this.#wakeForBacklog();
  }

  #context(job: JobRecord, logger: Logger, whenCommitted: JobContext["whenCommitted"], markDone: JobContext["markDone"]): JobContext {
    return { job, attempt: job.attempts, logger, signal: this.#abort.signal, whenCommitted, markDone };
  }

  #loggerOf(job: JobRecord): Logger {
    return this.logger.child({ jobId: job.id, jobType: job.type, attempt: job.attempts });
  }

  /** A handler threw: the job is dead, queued again after its backoff, or (RunLaterError) queued for later without using an attempt. */
  async #failed(job: JobRecord, error: unknown, logger: Logger): Promise<void> {
    if (error instanceof RunLaterError) {
      logger.debug("job runs later", { reason: error.message, runAt: new Date(error.runAt).toISOString() });
      await this.jobs.update(
        job.id,
        { status: "queued", attempts: job.attempts - 1, leaseUntil: null, runAt: error.runAt, updatedAt: this.clock.now() },
        { where: { status: "running", attempts: job.attempts } },
      );
      return this.notifyDue(error.runAt);
    }
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof PermanentJobError || job.attempts >= job.maxAttempts) return this.#finish(job, "dead", message, logger);
    const runAt = this.clock.now() + this.#backoff(job.attempts);
    logger.warn("job failed; will retry", { error, runAt: new Date(runAt).toISOString() });
    await this.jobs.update(
      job.id,
      { status: "queued", leaseUntil: null, lastError: message, runAt, updatedAt: this.clock.now() },
      { where: { status: "running", attempts: job.attempts } },
    );
    this.notifyDue(runAt);
  }

  /** A task ended with more jobs due than the queue had room for: wake the runner to claim them. */
  #wakeForBacklog(): void {
    // Woken once a lane has a set of slots' worth of room (the finishing task still counts), not at every task's
    // end: its queue still holds work for its slots meanwhile, and a wake claims that many jobs in one commit.
    const roomForASet = this.#lanes.some((lane) => lane.queue.size + lane.queue.pending <= lane.concurrency);
    if (this.#backlog && roomForASet && !this.#stopping) {
      this.#backlog = false;
      this.#arm(this.clock.now());
    }
  }

  async #finish(job: JobRecord, status: "done" | "dead", error: string | null, logger: Logger): Promise<void> {
    const now = this.clock.now();
    if (status === "dead") logger.error("job is dead", { error });
    await this.jobs.update(
      job.id,
      { status, activeKey: null, leaseUntil: null, lastError: error ?? job.lastError, updatedAt: now, finishedAt: now },
      // Fenced by the attempt number: a worker that lost its lease cannot overwrite the new owner's result.
      { where: { status: "running", attempts: job.attempts } },
    );
  }

  #backoff(attempt: number): number {
    return Math.min(this.settings.backoffMaxMs, this.settings.backoffBaseMs * 2 ** (attempt - 1));
  }
}
