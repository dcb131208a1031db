/** One receiver's requests: those out, and those waiting for a slot in order. */
interface Lane {
  running: number;
  waiting: Array<() => void>;
  /** Drains waiting for fewer than `concurrency` requests to be waiting (`roomFor`). */
  roomWaiters: Array<() => void>;
}

/**
 * Each receiver's requests (by webhook): at most `concurrency` out at once, the others waiting in order.
 * What p-queue did for the drains, without its events, timers and promise per task: it was 3% of the
 * delivery phase's CPU samples (bench/webhooks.ts). A slot is taken and given back by its user rather than
 * around a task's promise, which cost two promises and three closures a request more. A lane with nothing out
 * or waiting is forgotten.
 */
export class ReceiverLanes {
  readonly #lanes = new Map<string, Lane>();

  constructor(private readonly concurrency: number) {}

  /**
   * Takes one of `receiver`'s slots: at once (undefined) when one is free, else a promise that settles once one is
   * handed over, in the order asked. Every slot taken is given back with `release`.
   */
  acquire(receiver: string): Promise<void> | undefined {
    let lane = this.#lanes.get(receiver);
    if (lane === undefined) this.#lanes.set(receiver, (lane = { running: 0, waiting: [], roomWaiters: [] }));
    if (lane.running < this.concurrency) {
      lane.running++;
      return undefined;
    }
    const waiting = lane.waiting;
    return new Promise((resolve) => waiting.push(resolve));
  }

  /** Gives back a slot of `receiver`: to the first request waiting, if any. */
  release(receiver: string): void {
    const lane = this.#lanes.get(receiver);
    if (lane === undefined) return;
    const next = lane.waiting.shift();
    if (next) next();
    else lane.running--;
    if (lane.waiting.length < this.concurrency && lane.roomWaiters.length > 0) for (const resolve of lane.roomWaiters.splice(0)) resolve();
    if (lane.running === 0) this.#lanes.delete(receiver);
  }

  /** Settles once fewer than `concurrency` of `receiver`'s requests wait for a slot. */
  roomFor(receiver: string): Promise<void> {
    const lane = this.#lanes.get(receiver);
    if (lane === undefined || lane.waiting.length < this.concurrency) return Promise.resolve();
    return new Promise((resolve) => lane.roomWaiters.push(resolve));
  }
}
