import type { Clock } from "../../src/index.ts";

/** A clock that only moves when told to. Pair it with the manual scheduler in tests. */
export interface FakeClock extends Clock {
  set(epochMs: number | Date | string): void;
  advance(ms: number): void;
}

export function fakeClock(start: number | Date | string = "2026-01-01T00:00:00.000Z"): FakeClock {
  let current = toEpoch(start);
  return {
    now: () => current,
    set(time) {
      current = toEpoch(time);
    },
    advance(ms) {
      current += ms;
    },
  };
}

function toEpoch(time: number | Date | string): number {
  const epoch = typeof time === "number" ? time : new Date(time).getTime();
  if (!Number.isFinite(epoch)) throw new TypeError(`not a valid time: ${String(time)}`);
  return epoch;
}
