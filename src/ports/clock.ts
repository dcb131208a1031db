import { defineToken } from "../kernel/token.ts";

/** Where time comes from. Everything time-dependent reads it, so tests can move it. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const CLOCK = defineToken<Clock>("Clock", [
  "reachkit/adapters/clock (systemClock, fakeClock)",
]);
