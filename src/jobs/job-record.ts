import type { CollectionSpec, Doc } from "../ports/storage.ts";

export type JobStatus = "queued" | "running" | "done" | "dead" | "cancelled";

/** A durable job as stored. */
export interface JobRecord extends Doc {
  type: string;
  /** The caller's key (cancel or replace by it); kept for display after the job ends. */
  key: string | null;
  /** Equal to `key` while the job is queued or running, null after: at most one live job per key. */
  activeKey: string | null;
  companyId: string | null;
  payload: unknown;
  status: JobStatus;
  /**
   * Its type, for a type with slots of its own (`JobDefinition.slots`), which claim its jobs; absent for
   * the rest, which the runner's slots claim.
   */
  lane?: string;
  /** Epoch ms when the job is due. */
  runAt: number;
  attempts: number;
  maxAttempts: number;
  /** While running: when another worker may assume this one died and take the job over. */
  leaseUntil: number | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
}

export const JOBS_COLLECTION = "reachkit_jobs";

export const jobsCollection: CollectionSpec = {
  name: JOBS_COLLECTION,
  // Sparse: most jobs have no key, and a job holds a lease only while it runs, so most rows write and move no
  // entry in those indexes; each query of them names the field with a value (test/jobs/job-indexes.test.ts).
  // The default lane's jobs have no lane and are claimed by `lane: null`: (status, lane, runAt) stays full.
  indexes: [
    { fields: ["status", "runAt"] },
    { fields: ["status", "lane", "runAt"] },
    { fields: ["status", "leaseUntil"], sparse: true },
    { fields: ["activeKey"], unique: true, sparse: true },
    { fields: ["key"], sparse: true },
    { fields: ["companyId"] },
  ],
};

/** Thrown by a handler for a failure that retrying cannot fix: the job goes straight to dead. */
export class PermanentJobError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PermanentJobError";
  }
}

/**
 * Thrown by a handler that cannot do its work yet and knows when it can: the job is queued again for
 * `runAt`, and this run does not count as an attempt (a text held back by its sender's rate, a webhook
 * delivery on its own retry schedule or waiting for its receiver's room).
 */
export class RunLaterError extends Error {
  constructor(
    readonly runAt: number,
    reason: string,
  ) {
    super(reason);
    this.name = "RunLaterError";
  }
}
