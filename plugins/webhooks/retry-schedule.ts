/**
 * When a failed delivery is tried again: 10 s after the first attempt, then
 * five times longer after each (50 s, about 4 min, 21 min, 1 h 44 min), at
 * most 8 h apart, each delay stretched or shrunk at random by up to a fifth
 * (jitter, so receivers that come back are not hit by every retry at once).
 * The ninth attempt, about 26 hours after the first, is the last.
 */
export const MAX_DELIVERY_ATTEMPTS = 9;
const FIRST_DELAY_MS = 10_000;
const GROWTH = 5;
const MAX_DELAY_MS = 8 * 3_600_000;
const JITTER = 0.2;

/** The delay after failed attempt `attempt` (1-based), jitter applied; `random` in [0, 1). */
export function retryDelayMs(attempt: number, random: number = Math.random()): number {
  const nominal = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * GROWTH ** (attempt - 1));
  return Math.round(nominal * (1 - JITTER + 2 * JITTER * random));
}
