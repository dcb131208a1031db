import { AsyncLocalStorage } from "node:async_hooks";
import schedule from "node-schedule";
import type { Scheduler } from "../../../src/index.ts";

/**
 * Real-time scheduler over node-schedule. It keeps exactly one armed job: every
 * `arm` cancels the previous alarm, so memory does not grow with pending jobs.
 */
export function nodeScheduleScheduler(): Scheduler {
  let wake: (() => Promise<void>) | undefined;
  /**
   * The async context of start(). Wakes run in it, not in the context of
   * whoever armed: an enqueue inside a storage transaction arms the alarm, and
   * a wake inheriting that context would make the job runner's claims and jobs
   * join the caller's transaction while it is still open (a networked
   * database's transaction stays open across round trips long enough for that).
   */
  let inStartContext: <R>(fn: () => R) => R = (fn) => fn();
  let alarm: schedule.Job | null = null;
  let immediate: NodeJS.Immediate | null = null;
  /** Wakes under way; stop() waits for them. */
  const running = new Set<Promise<void>>();
  let stopped = false;

  function disarm(): void {
    alarm?.cancel();
    alarm = null;
    if (immediate) clearImmediate(immediate);
    immediate = null;
  }

  function fire(): void {
    alarm = null;
    immediate = null;
    if (stopped || !wake) return;
    // Every alarm wakes the runner at once, even while an earlier wake's jobs still run: a wake
    // resolves only when its jobs settle, and holding the next one back behind it let one slow or
    // stuck job stop all claiming. The job runner keeps its own claims one at a time.
    const current: Promise<void> = wake()
      .catch(() => undefined) // the job runner logs its own failures
      .finally(() => running.delete(current));
    running.add(current);
  }

  return {
    start(onWake) {
      wake = onWake;
      inStartContext = AsyncLocalStorage.snapshot();
      stopped = false;
    },
    arm(at) {
      disarm();
      if (stopped || at === null) return;
      // node-schedule ignores dates in the past, and the runner arms "now" for due work.
      const fireInStartContext = () => inStartContext(fire);
      if (at > Date.now()) alarm = schedule.scheduleJob(new Date(at), fireInStartContext);
      // null when the time passed while node-schedule set it (it reads the clock again): a lost alarm would leave
      // the job runner believing it is armed, and every job due later than it would wait forever.
      if (!alarm) immediate = setImmediate(fireInStartContext);
    },
    async stop() {
      stopped = true;
      disarm();
      await Promise.all(running);
    },
  };
}
