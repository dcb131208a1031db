import type { Clock } from "../ports/clock.ts";

/** Wall-clock time: the default of every kit. */
export function systemClock(): Clock {
  return { now: () => Date.now() };
}
