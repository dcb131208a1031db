import { DEFAULT_RATE_LIMITS } from "../auth/rate-limiter.ts";
import { DEFAULT_JOB_SETTINGS, type JobSettings } from "../jobs/jobs.ts";
import { DEFAULT_MESSAGING_SETTINGS, type MessagingSettings } from "../messaging/outbox.ts";

export interface ReachkitConfig {
  /** Largest JSON or form body accepted (413 above). */
  bodyLimitBytes: number;
  /** Requests per second per token, by route class. `Infinity` lifts a limit. */
  rateLimits: Readonly<Record<string, number>>;
  jobs: JobSettings;
  messaging: MessagingSettings;
}

export interface ReachkitConfigInput {
  bodyLimitBytes?: number;
  rateLimits?: Readonly<Record<string, number>>;
  jobs?: Partial<JobSettings>;
  messaging?: Partial<MessagingSettings>;
}

export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;

export function resolveConfig(input: ReachkitConfigInput = {}): ReachkitConfig {
  return {
    bodyLimitBytes: input.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES,
    rateLimits: { ...DEFAULT_RATE_LIMITS, ...input.rateLimits },
    jobs: { ...DEFAULT_JOB_SETTINGS, ...input.jobs },
    messaging: { ...DEFAULT_MESSAGING_SETTINGS, ...input.messaging },
  };
}
