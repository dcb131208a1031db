import type { GroupWrite } from "../kernel/group-commit.ts";
import type { Logger } from "../ports/logger.ts";
import type { JobRecord } from "./job-record.ts";

export interface JobContext {
  job: JobRecord;
  /** 1 on the first run. */
  attempt: number;
  logger: Logger;
  /** Aborted when the kit stops; long handlers may stop early and be retried. */
  signal: AbortSignal;
  /**
   * Gives the job's place among the runner's `concurrency` back while the
   * handler waits on another system (a webhook receiver): the runner goes on
   * claiming other jobs, and this one stays running, its lease renewed, until
   * the handler settles. A handler that calls it bounds its own concurrency.
   * Does nothing in a batch (`JobDefinition.batchSize`), whose handlers must
   * not wait on other systems.
   */
  releaseSlot(): void;
  /**
   * Marks the job done in the caller's transaction, for a handler that
   * commits its outcome in a transaction of its own (beside the outcomes of
   * other jobs, in a `GroupCommit`): the job's end commits with it. Given the
   * group's handle (`groupCommit.run(async (group) => { …;
   * await context.markDone(group); })`), the mark joins the group's done
   * marks, written in one statement after its last write, before its commit,
   * and dropped if this write throws. In a batch (`batchSize`) the marks are
   * the batch's anyway. Called last; the runner then leaves the job as it is.
   */
  markDone(group?: GroupWrite): Promise<void>;
}

/** What a job did, in counts and names (an upload's lines, products saved, errors): logged with its outcome. */
export type JobOutcome = Readonly<Record<string, string | number | boolean>>;

export type JobHandler<P> = (payload: P, context: JobContext) => Promise<void | JobOutcome>;

/** One job of a batch, as a {@link BatchHandler} is given it. */
export interface BatchedJob<P> {
  payload: P;
  job: JobRecord;
  /** 1 on the first run. */
  attempt: number;
}

/** What a batch's handler is given beside its jobs: their logger's parent and the kit's stop. */
export interface BatchContext {
  logger: Logger;
  /** Aborted when the kit stops. */
  signal: AbortSignal;
}

/**
 * Does the work of a whole batch in one call (`JobDefinition.batchHandler`), and answers one outcome per
 * job, in the order given (or nothing: no outcome to log).
 */
export type BatchHandler<P> = (jobs: readonly BatchedJob<P>[], context: BatchContext) => Promise<ReadonlyArray<void | JobOutcome> | void>;

/** A job type's handler, whether its jobs run in batches, and whether they have slots of their own. */
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
   * network call). Work that must wait for the commit goes to the storage's
   * `afterCommit` (where the event bus runs its ordinary listeners): it runs
   * once the batch commits, never if the job's writes are undone. Batches
   * form when the runner is alone on its storage (no `pollMs`); with other
   * processes each job runs in a transaction of its own, with its done mark.
   */
  batchSize?: number;
  /**
   * The work of a whole batch (`batchSize`) in one call, for work that costs less done for many jobs at
   * once (one read of each kind for the batch's keys, each table's rows in one write, one company read).
   * It runs inside the batch's transaction in one savepoint, and the batch's done marks are written in
   * the same transaction: a job is done exactly when the batch's writes commit, and a crash before that
   * leaves every job of it queued. When it throws (one job's work failed, or a concurrent write got in
   * its way), its savepoint is rolled back whole and the batch runs again at once one job at a time
   * through `handler`, each in a savepoint of its own: the job whose work fails undoes its own writes
   * only, has its attempt counted and its error logged, and is retried alone after its backoff, while the
   * others commit. So it must do exactly what `handler` would do for each job; `handler` still runs a
   * job claimed alone (a batch of one, and every job when other processes share the storage, `pollMs`,
   * where no batch forms).
   */
  batchHandler?: BatchHandler<P>;
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
