import type { Scheduler } from "../../../src/index.ts";
import { fakeClock, type FakeClock } from "../../clock/fake-clock.ts";

/**
 * A scheduler driven by hand over a fake clock: nothing fires until the test
 * calls `advance` (or `flush` for what is already due). Every wake-up is awaited,
 * so when `advance` resolves every job that fell due has run.
 */
export interface ManualScheduler extends Scheduler {
  readonly clock: FakeClock;
  /** When the alarm is armed for, or null. */
  readonly armedAt: number | null;
  /** Moves the clock forward by `ms`, stopping at each armed time on the way to run what is due. */
  advance(ms: number): Promise<void>;
  /** Runs what is due now without moving the clock. */
  flush(): Promise<void>;
}

/** Guards a test against a job runner that keeps re-arming in the past without progress. */
const MAX_WAKES_PER_ADVANCE = 100_000;

export function manualScheduler(clock: FakeClock = fakeClock()): ManualScheduler {
  let wake: (() => Promise<void>) | undefined;
  let armedAt: number | null = null;
  let stopped = false;

  async function advance(ms: number): Promise<void> {
    if (ms < 0) throw new RangeError("cannot move the clock backwards");
    const target = clock.now() + ms;
    for (let wakes = 0; wake && !stopped && armedAt !== null && armedAt <= target; wakes++) {
      if (wakes >= MAX_WAKES_PER_ADVANCE) throw new Error("the job runner keeps re-arming without progress");
      if (armedAt > clock.now()) clock.set(armedAt);
      armedAt = null; // the runner re-arms as it sees fit while it wakes
      await wake();
    }
    if (target > clock.now()) clock.set(target);
  }

  return {
    clock,
    get armedAt() {
      return armedAt;
    },
    start(onWake) {
      wake = onWake;
      stopped = false;
    },
    arm(at) {
      if (!stopped) armedAt = at;
    },
    async stop() {
      stopped = true;
      armedAt = null;
    },
    advance,
    flush: () => advance(0),
  };
}
