import type { Clock } from "../ports/clock.ts";
import { HttpError } from "../http/errors.ts";

/** Requests per second per token, by route class (wire-compat defaults). */
export const DEFAULT_RATE_LIMITS: Readonly<Record<string, number>> = {
  default: 150,
  "opt-in": 10,
  unsubscribe: 5,
  "catalog-upload": 1,
  identity: 10,
};

export interface RateDecision {
  limit: number;
  remaining: number;
  /** Seconds until the window resets, for Retry-After. */
  retryAfterSeconds: number;
  allowed: boolean;
}

const WINDOW_MS = 1000;

/**
 * Fixed one-second windows per token and route class, in memory. Limits are per
 * process: a deployment of several processes multiplies them.
 */
export class RateLimiter {
  readonly #windows = new Map<string, { start: number; count: number }>();
  #lastSweep = 0;

  constructor(
    private readonly clock: Clock,
    private readonly limits: Readonly<Record<string, number>>,
  ) {}

  take(subject: string, routeClass: string): RateDecision {
    const limit = this.limits[routeClass] ?? this.limits.default ?? DEFAULT_RATE_LIMITS.default!;
    // A class configured without a limit (Infinity) has nothing to count.
    if (limit === Infinity) return UNLIMITED;
    const now = this.clock.now();
    const start = now - (now % WINDOW_MS);
    this.#sweep(start);
    const key = `${routeClass}\u0000${subject}`;
    let window = this.#windows.get(key);
    if (!window || window.start !== start) this.#windows.set(key, (window = { start, count: 0 }));
    const allowed = window.count < limit;
    if (allowed) window.count++;
    return {
      limit,
      remaining: Math.max(0, limit - window.count),
      retryAfterSeconds: Math.max(1, Math.ceil((start + WINDOW_MS - now) / 1000)),
      allowed,
    };
  }

  #sweep(currentStart: number): void {
    if (currentStart - this.#lastSweep < 60_000) return;
    this.#lastSweep = currentStart;
    for (const [key, window] of this.#windows) if (window.start < currentStart) this.#windows.delete(key);
  }
}

const UNLIMITED: RateDecision = Object.freeze({ limit: Infinity, remaining: Infinity, retryAfterSeconds: 0, allowed: true });

/** The headers of a decision; none for an unlimited class, where "Infinity" would tell a client nothing. */
export function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  if (decision.limit === Infinity) return {};
  return {
    "x-ratelimit-limit": String(decision.limit),
    "x-ratelimit-remaining": String(decision.remaining),
  };
}

export function tooManyRequests(decision: RateDecision): HttpError {
  return new HttpError(429, "rate_limited", "too many requests; slow down", [], {
    ...rateLimitHeaders(decision),
    "retry-after": String(decision.retryAfterSeconds),
  });
}
