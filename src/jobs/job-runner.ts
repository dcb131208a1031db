import { setMaxListeners } from "node:events";
import PQueue from "p-queue";
import { BulkWrite, GroupCommit, type GroupWrite } from "../kernel/group-commit.ts";
import type { Clock } from "../ports/clock.ts";
import type { Logger } from "../ports/logger.ts";
import type { Scheduler } from "../ports/scheduler.ts";
import type { Collection, Where } from "../ports/storage.ts";
import { JobBatches, type JobType } from "./job-batches.ts";
import type { JobContext, JobDefinition, JobRunnerSettings } from "./job-definition.ts";
import type { JobRecord } from "./job-record.ts";
import { JobRows } from "./job-rows.ts";

/**
 * Jobs whose handlers gave their slot back (waiting on another system) may
 * number this many times the concurrency; beyond that the runner claims no more
 * until some finish, so work that waits elsewhere never floods memory.
 */
export const RELEASED_PER_SLOT = 256;

/** Slots that run jobs, and which jobs they claim: the runner's own (every type without slots of its own), or one type's. */
interface Lane {
  queue: PQueue;
  concurrency: number;
  where: Where<JobRecord>;
  /** More of its jobs were due than its queue had room for: one of them finishing wakes the runner again. */
  backlog: boolean;
}

/**
 * Claims due jobs (JobRows: conditional updates, so several processes on one
 * database never run the same job twice at once), runs them through p-queue,
 * one queue per lane, and arms the scheduler for the next due time: one alarm,
 * never a timer per job.
 */
export class JobRunner {
  readonly #types = new Map<string, JobType>();
  /** The runner's own slots first, then those of each type that has its own. */
  readonly #lanes: Lane[];
  readonly #rows: JobRows;
  /** Claimed but not started yet: given back if the kit stops first. */
  readonly #claimed = new Map<string, JobRecord>();
  /** Its signal is every running job's: jobs that released their slot may number thousands, each listening. */
  readonly #abort = (() => {
    const controller = new AbortController();
    setMaxListeners(0, controller.signal);
    return controller;
  })();
  /** Every job running alone, those whose handlers released their slot included: the kit's stop waits for them. */
  readonly #running = new Set<Promise<void>>();
  /**
   * Settles when a job finishes or the runner arms for now: what a wake waiting for jobs that released
   * their slot awaits. One promise for every waiting wake (several run at once).
   */
  #change: { settled: Promise<void>; settle: () => void } | undefined;
  #started = false;
  #stopping = false;
  #ticking: Promise<void> | null = null;
  #tickAgain = false;
  #armedAt: number | null = null;
  /**
   * The rows of jobs that threw (run later, retry, dead) in one turn of the event loop, written in one
   * commit: a wake's deliveries to a slow receiver are each put back (RunLaterError), tens at a time.
   */
  readonly #failures: GroupCommit;
  /**
   * The done marks of jobs that finish in one group's transaction (a GroupCommit of their outcomes, or a
   * batch): written in one statement there, before its commit.
   */
  readonly #doneMarks: BulkWrite<JobRecord>;
  readonly #batches: JobBatches;

  constructor(
    jobs: Collection<JobRecord>,
    private readonly clock: Clock,
    private readonly scheduler: Scheduler,
    private readonly logger: Logger,
    private readonly settings: JobRunnerSettings,
    /** Runs a batch of claims atomically (the storage's transaction): one commit per tick, not one per job. */
    private readonly atomically: <R>(work: () => Promise<R>) => Promise<R>,
  ) {
    this.#rows = new JobRows(jobs, clock, settings);
    this.#failures = new GroupCommit({ transaction: atomically });
    this.#doneMarks = new BulkWrite((jobs) => this.#rows.finishAll(jobs));
    this.#batches = new JobBatches({
      rows: this.#rows,
      doneMarks: this.#doneMarks,
      atomically,
      logger,
      signal: this.#abort.signal,
      loggerOf: (job) => this.#loggerOf(job),
      context: (job, logger, markDone) => this.#context(job, logger, () => undefined, markDone),
    });
    this.#lanes = [{ queue: new PQueue({ concurrency: settings.concurrency }), concurrency: settings.concurrency, where: { lane: null }, backlog: false }];
  }

  register(type: string, definition: JobDefinition<unknown>): void {
    if (this.#types.has(type)) throw new Error(`a handler for job type "${type}" is already registered`);
    const batchSize = definition.batchSize ?? 1;
    if (!Number.isSafeInteger(batchSize) || batchSize < 1) throw new RangeError(`job type "${type}": batchSize must be a whole number of at least 1, got ${String(batchSize)}`);
    if (definition.batchHandler && batchSize < 2) throw new RangeError(`job type "${type}": a batchHandler needs a batchSize of at least 2`);
    if (definition.slots !== undefined) this.#addLane(type, definition.slots);
    this.#types.set(type, { handler: definition.handler, batchSize, ...(definition.batchHandler ? { batchHandler: definition.batchHandler } : {}) });
  }

  #addLane(type: string, slots: number): void {
    if (!Number.isSafeInteger(slots) || slots < 1) throw new RangeError(`job type "${type}": slots must be a whole number of at least 1, got ${String(slots)}`);
    this.#lanes.push({ queue: new PQueue({ concurrency: slots }), concurrency: slots, where: { lane: type }, backlog: false });
  }

  /** The lane a job of this type is stored with: its type when it has slots of its own. */
  laneOf(type: string): string | undefined {
    return this.#lanes.some((lane) => lane.where.lane === type) ? type : undefined;
  }

  async start(requeueRunning: boolean): Promise<void> {
    if (requeueRunning) {
      const requeued = await this.#rows.requeueRunning();
      if (requeued > 0) this.logger.warn("jobs left running by a process that stopped without finishing them are queued again", { jobs: requeued });
    }
    this.#started = true;
    this.scheduler.start(() => this.#wake());
    // The first claim only, not the ticks that follow it: on a synchronous storage a backlog is worked tick after
    // tick, and the start (a server's listen after it) would wait until none is left.
    await this.#tick(true);
    // And a wake at once: it waits for the jobs that tick started (a manual scheduler's flush waits for them).
    if (!this.#stopping) this.#arm(this.clock.now());
  }

  /** A job became due at `runAt`: arm earlier if needed. */
  notifyDue(runAt: number): void {
    if (!this.#started || this.#stopping) return;
    // A tick under way may have read the queue before this job was committed and then arm past it: it looks
    // again before it ends.
    if (this.#ticking) this.#tickAgain = true;
    if (this.#armedAt === null || runAt < this.#armedAt) this.#arm(runAt);
  }

  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    // A wake waiting for jobs that released their slot returns now (see #idle): the scheduler's stop waits for its wakes.
    this.#changed();
    await this.scheduler.stop();
    for (const lane of this.#lanes) lane.queue.clear();
    await this.#ticking;
    for (const job of this.#claimed.values()) await this.#rows.giveBack(job);
    this.#claimed.clear();
    this.#abort.abort();
    await this.#idle();
  }

  async #wake(): Promise<void> {
    // The alarm has fired: none is armed now. Kept, a past #armedAt would turn away every later notifyDue
    // (its runAt is not earlier) whenever this wake's tick finds a backlog and arms nothing.
    this.#armedAt = null;
    await this.#tick();
    await this.#idle();
  }

  /**
   * Settles once no job runs, those that released their slot included. Meanwhile it serves the alarms
   * for now that their released slots and finished jobs set: a scheduler may hold its next wake back
   * until this one settles (the manual scheduler of tests does).
   */
  async #idle(): Promise<void> {
    for (;;) {
      await Promise.all(this.#lanes.map((lane) => lane.queue.onIdle()));
      if (this.#running.size === 0) return;
      // Stopping, a wake leaves the wait to stop(), which first tells the jobs (their signal): a wake that waited for a
      // job whose receiver never answers would hold the scheduler's stop, and so that signal, until the job ended alone.
      if (this.#stopping && !this.#abort.signal.aborted) return;
      // Without room (the jobs that released their slot are at their bound) a tick would claim nothing: wait for one to finish.
      if (!this.#stopping && this.#armedAt !== null && this.#armedAt <= this.clock.now() && this.#lanes.some((lane) => this.#room(lane) > 0)) {
        // After the I/O that is ready: the answers to requests of jobs that released their slot are not held behind a run of claims.
        await new Promise((resolve) => setImmediate(resolve));
        await this.#tick();
        continue;
      }
      await this.#nextChange();
    }
  }

  #nextChange(): Promise<void> {
    if (!this.#change) {
      let settle!: () => void;
      const settled = new Promise<void>((resolve) => (settle = resolve));
      this.#change = { settled, settle };
    }
    return this.#change.settled;
  }

  #changed(): void {
    this.#change?.settle();
    this.#change = undefined;
  }

  /** Claims and arms, again while asked meanwhile; `firstPassOnly`: settles after the first claim and arm. */
  #tick(firstPassOnly = false): Promise<void> {
    if (this.#ticking) {
      this.#tickAgain = true;
      return firstPassOnly ? Promise.resolve() : this.#ticking;
    }
    let firstPassDone = () => {};
    const firstPass = new Promise<void>((resolve) => (firstPassDone = resolve));
    this.#ticking = (async () => {
      try {
        do {
          this.#tickAgain = false;
          if (this.#stopping) return;
          await this.#claimDue();
          await this.#armForNextDue();
          firstPassDone();
          // Jobs that enqueue jobs (a scan a page per job) would otherwise claim and run in one chain of
          // microtasks on a synchronous storage: no timer, request or I/O of the process would run until it ends.
          if (this.#tickAgain) await new Promise((resolve) => setImmediate(resolve));
        } while (this.#tickAgain);
      } catch (error) {
        this.logger.error("job runner tick failed; retrying in 5 s", { error });
        this.#arm(this.clock.now() + 5_000);
      } finally {
        firstPassDone();
        this.#ticking = null;
      }
    })();
    return firstPassOnly ? firstPass : this.#ticking;
  }

  /**
   * Arms for the next due job, or lease to run out. A lane with a backlog is woken by its own jobs' ends
   * (#wakeForBacklog), and each of those wakes looks at the leases; the other lanes arm for their next due job
   * (a reminder due while deliveries have a backlog), if they have one and it is not armed already (arming the
   * scheduler at every wake of a backlog cost 3% of a delivery's CPU).
   */
  async #armForNextDue(): Promise<void> {
    const waiting = this.#lanes.filter((lane) => !lane.backlog);
    if (waiting.length === this.#lanes.length) return this.#arm(await this.#rows.nextWakeAt());
    if (waiting.length === 0) return;
    const at = await this.#rows.earliestQueuedRunAt(waiting.map((lane) => lane.where));
    if (at !== null && at !== this.#armedAt) this.#arm(at);
  }

  /** How many tasks a lane may claim now: twice its slots in its queue, none while the jobs that released their slot are at their bound. */
  #room(lane: Lane): number {
    const inSlots = this.#lanes.reduce((sum, each) => sum + each.queue.pending, 0);
    if (this.#running.size - inSlots >= this.settings.concurrency * RELEASED_PER_SLOT) return 0;
    return lane.concurrency * 2 - lane.queue.size - lane.queue.pending;
  }

  async #claimDue(): Promise<void> {
    const open: Array<{ lane: Lane; room: number; where: Where<JobRecord> }> = [];
    for (const lane of this.#lanes) {
      const room = this.#room(lane);
      lane.backlog = room <= 0;
      if (room > 0) open.push({ lane, room, where: lane.where });
    }
    if (open.length === 0) return;
    if (!this.#sharesStorage) {
      // Alone on its storage, the runner claims a wake's jobs in one transaction: one commit, and a failed
      // claim leaves every job queued.
      const started: Array<{ lane: Lane; task: JobRecord[] }> = [];
      const batchSizeOf = (type: string) => this.#types.get(type)?.batchSize ?? 1;
      const largestBatch = Math.max(1, ...[...this.#types.values()].map((type) => type.batchSize));
      await this.atomically(async () => {
        const now = await this.#rows.requeueExpiredLeases();
        for (const request of open) {
          const { tasks, more } = await this.#rows.claimInBatches(request, now, batchSizeOf, largestBatch);
          if (more) request.lane.backlog = true;
          for (const task of tasks) started.push({ lane: request.lane, task });
        }
      });
      started.forEach(({ lane, task }) => this.#start(lane, task));
    } else {
      // With other processes on the database, each claim is a statement of its own and its job starts at
      // once (a failed claim leaves the jobs won before it running here). A transaction would hold the row
      // locks of its claims until it commits: the other processes' claims of the same rows would wait on
      // them, and every other storage call of theirs would wait behind their own open claim transaction.
      const now = await this.#rows.requeueExpiredLeases();
      for (const request of open) {
        if (await this.#rows.claimShared(request, now, (job) => this.#start(request.lane, [job]))) request.lane.backlog = true;
      }
    }
  }

  /** Other processes run jobs on the same database: the runner is told to poll for what they enqueue. */
  get #sharesStorage(): boolean {
    return this.settings.pollMs !== undefined;
  }

  #start(lane: Lane, task: JobRecord[]): void {
    for (const job of task) this.#claimed.set(job.id, job);
    const type = this.#types.get(task[0]!.type);
    void lane.queue.add(() => (type && type.batchSize > 1 ? this.#executeBatch(type, task) : this.#execute(task[0]!)));
  }

  #arm(at: number | null): void {
    const { pollMs } = this.settings;
    if (pollMs !== undefined) {
      const poll = this.clock.now() + pollMs;
      if (at === null || poll < at) at = poll;
    }
    this.#armedAt = at;
    this.scheduler.arm(at);
    if (at !== null && at <= this.clock.now()) this.#changed();
  }

  /** Runs a job in its queue slot; resolves when it is done, or when its handler releases the slot. */
  #execute(job: JobRecord): Promise<void> {
    this.#claimed.delete(job.id);
    let releaseSlot!: () => void;
    const released = new Promise<void>((resolve) => (releaseSlot = resolve));
    const run: Promise<void> = this.#run(job, releaseSlot).finally(() => {
      this.#running.delete(run);
      this.#changed();
    });
    this.#running.add(run);
    // A released slot is room for another claim.
    return Promise.race([run, released.then(() => void (this.#stopping || this.#arm(this.clock.now())))]);
  }

  async #run(job: JobRecord, releaseSlot: () => void): Promise<void> {
    const logger = this.#loggerOf(job);
    const handler = this.#types.get(job.type)?.handler;
    if (!handler) return this.#rows.finish(job, "dead", `no handler registered for job type "${job.type}"`, logger);
    if (job.attempts > job.maxAttempts) return this.#rows.finish(job, "dead", "lease expired on every attempt", logger);
    const heartbeat = setInterval(() => {
      void this.#rows.renewLease(job).catch((error: unknown) => logger.warn("lease renewal failed", { error }));
    }, Math.max(1_000, this.settings.leaseMs / 3));
    heartbeat.unref();
    const started = performance.now();
    let markedDone = false;
    const markDone = async (group?: GroupWrite) => {
      if (group) group.defer(this.#doneMarks, job);
      else await this.#rows.finish(job, "done", null, logger);
      markedDone = true;
    };
    try {
      const outcome = await handler(job.payload, this.#context(job, logger, releaseSlot, markDone));
      logger.info("job done", { ...outcome, ms: Math.round(performance.now() - started) });
      if (!markedDone) await this.#rows.finish(job, "done", null, logger);
    } catch (error) {
      await this.#failed(job, error, logger);
    } finally {
      clearInterval(heartbeat);
      this.#wakeForBacklog();
    }
  }

  /** Runs a batch (JobBatches), then logs its jobs' ends and writes its failures. */
  async #executeBatch(type: JobType, batch: readonly JobRecord[]): Promise<void> {
    for (const job of batch) this.#claimed.delete(job.id);
    const { done, failures } = await this.#batches.run(type, batch);
    for (const log of done) log();
    for (const { job, error } of failures) await this.#failed(job, error, this.#loggerOf(job));
    this.#wakeForBacklog();
  }

  #context(job: JobRecord, logger: Logger, releaseSlot: () => void, markDone: JobContext["markDone"]): JobContext {
    return { job, attempt: job.attempts, logger, signal: this.#abort.signal, releaseSlot, markDone };
  }

  #loggerOf(job: JobRecord): Logger {
    return this.logger.child({ jobId: job.id, jobType: job.type, attempt: job.attempts });
  }

  async #failed(job: JobRecord, error: unknown, logger: Logger): Promise<void> {
    const dueAgainAt = await this.#failures.run(() => this.#rows.failed(job, error, logger));
    if (dueAgainAt !== undefined) this.notifyDue(dueAgainAt);
  }

  /** A task ended with more jobs due than the queues had room for: wake the runner to claim them. */
  #wakeForBacklog(): void {
    // Woken once a lane with a backlog has only half a set of slots' worth of jobs waiting for a slot, not at every
    // task's end: the wake claims at least that many in one commit while the waiting ones keep its slots busy (waking
    // only once none waited left its slots idle while it claimed). Another lane's room does not count: the runner's
    // own slots, idle beside a backlog of deliveries, woke it at nearly every delivery's end, to claim a few jobs.
    const roomForHalfASet = this.#lanes.some((lane) => lane.backlog && lane.queue.size <= lane.concurrency / 2);
    if (roomForHalfASet && !this.#stopping) {
      for (const lane of this.#lanes) lane.backlog = false;
      this.#arm(this.clock.now());
    }
  }
}
