import { defineToken } from "../kernel/token.ts";

/**
 * The Scheduler port wakes the job runner. It holds a single alarm: the job
 * runner keeps due jobs durable in Storage and arms the alarm for the earliest
 * one, so there is never one timer per job.
 */
export interface Scheduler {
  /** Called once by the job runner; `wake` runs every due job and resolves when they settled. */
  start(wake: () => Promise<void>): void;
  /** Arms the alarm for `at` (epoch ms, may be in the past: wake soon), replacing the previous one; null disarms. */
  arm(at: number | null): void;
  /** Disarms for good; no wake starts after it resolves. */
  stop(): Promise<void>;
}

export const SCHEDULER = defineToken<Scheduler>("Scheduler", [
  "reachkit/adapters/scheduler/node-schedule (nodeScheduleScheduler)",
  "reachkit/adapters/scheduler/manual (manualScheduler, for tests)",
]);
