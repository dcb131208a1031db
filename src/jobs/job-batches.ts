import { BulkWrites, type BulkWrite } from "../kernel/group-commit.ts";
import type { Logger } from "../ports/logger.ts";
import type { BatchHandler, JobContext, JobHandler, JobOutcome } from "./job-definition.ts";
import type { JobRecord } from "./job-record.ts";
import type { JobRows } from "./job-rows.ts";

/** A registered job type as the runner keeps it. */
export interface JobType {
  handler: JobHandler<unknown>;
  batchSize: number;
  batchHandler?: BatchHandler<unknown>;
}

/** What running a batch takes of the job runner. */
export interface BatchParts {
  rows: JobRows;
  /** The done marks of one transaction's jobs, written in one statement before its commit. */
  doneMarks: BulkWrite<JobRecord>;
  /** The storage's transaction; nested, a savepoint. */
  atomically: <R>(work: () => Promise<R>) => Promise<R>;
  logger: Logger;
  signal: AbortSignal;
  loggerOf(job: JobRecord): Logger;
  /** A job's context in a batch: its slot is the batch's, and `markDone` joins the batch's done marks. */
  context(job: JobRecord, logger: Logger, markDone: JobContext["markDone"]): JobContext;
}

/** How a batch ended: the "job done" lines to log now that it has committed, and the jobs that failed. */
export interface BatchEnd {
  done: Array<() => void>;
  failures: Array<{ job: JobRecord; error: unknown }>;
}

/**
 * Runs the batches of batched job types (`JobDefinition.batchSize`) in one storage transaction: through the
 * type's `batchHandler` in one savepoint when it has one (and the batch has two jobs or more), else, or when
 * that throws, each job in a savepoint of its own through `handler`. Each job is marked done in the
 * transaction, so a job is done exactly when its writes are committed. No lease is renewed: the batch holds
 * the storage until it commits, so a renewal could only land after it.
 */
export class JobBatches {
  constructor(private readonly parts: BatchParts) {}

  async run(type: JobType, batch: readonly JobRecord[]): Promise<BatchEnd> {
    const end: BatchEnd = { done: [], failures: [] };
    try {
      await this.parts.atomically(async () => {
        const bulk = new BulkWrites();
        const live: JobRecord[] = [];
        for (const job of batch) {
          if (job.attempts > job.maxAttempts) await this.parts.rows.finish(job, "dead", "lease expired on every attempt", this.parts.loggerOf(job));
          else live.push(job);
        }
        // A batch of one job gains nothing from a handler of many: it runs as a job alone would.
        const whole = type.batchHandler && live.length > 1 ? await this.#runWhole(type.batchHandler, live, bulk) : undefined;
        if (whole) end.done = whole;
        else for (const job of live) await this.#runOne(type.handler, job, bulk, end);
        await bulk.write();
      });
      return end;
    } catch (error) {
      // The commit failed: nothing of the batch was stored, and every job of it runs again.
      return { done: [], failures: batch.map((job) => ({ job, error })) };
    }
  }

  /**
   * The batch's jobs through one call of `batchHandler`, in a savepoint with their done marks: the "job done"
   * lines to log once committed, or undefined when it threw (its savepoint rolled back, nothing of it kept).
   */
  async #runWhole(batchHandler: BatchHandler<unknown>, jobs: readonly JobRecord[], bulk: BulkWrites): Promise<Array<() => void> | undefined> {
    const started = performance.now();
    try {
      const outcomes = await bulk.member((group) =>
        this.parts.atomically(async () => {
          const outcomes = await batchHandler(
            jobs.map((job) => ({ payload: job.payload, job, attempt: job.attempts })),
            { logger: this.parts.logger, signal: this.parts.signal },
          );
          if (outcomes && outcomes.length !== jobs.length) throw new TypeError(`a batchHandler answered ${outcomes.length} outcomes for ${jobs.length} jobs`);
          for (const job of jobs) group.defer(this.parts.doneMarks, job);
          return outcomes;
        }),
      );
      const ms = Math.round(performance.now() - started);
      return jobs.map((job, i) => () => this.parts.loggerOf(job).info("job done", { ...(outcomes?.[i] as JobOutcome | undefined), batch: jobs.length, ms }));
    } catch (error) {
      this.parts.logger.warn("a batch's work failed: its jobs run again one at a time", { jobType: jobs[0]!.type, jobs: jobs.length, error });
      return undefined;
    }
  }

  /** One job of a batch in a savepoint of its own, its done mark with the batch's. */
  async #runOne(handler: JobHandler<unknown>, job: JobRecord, bulk: BulkWrites, end: BatchEnd): Promise<void> {
    const logger = this.parts.loggerOf(job);
    const started = performance.now();
    try {
      let markedDone = false;
      const outcome = await bulk.member((group) =>
        this.parts.atomically(async () => {
          // With the batch's other done marks, in one statement before its commit.
          const finish = async () => {
            if (!markedDone) group.defer(this.parts.doneMarks, job);
            markedDone = true;
          };
          const outcome = await handler(job.payload, this.parts.context(job, logger, finish));
          await finish();
          return outcome;
        }),
      );
      const ms = Math.round(performance.now() - started);
      end.done.push(() => logger.info("job done", { ...outcome, ms }));
    } catch (error) {
      end.failures.push({ job, error });
    }
  }
}
