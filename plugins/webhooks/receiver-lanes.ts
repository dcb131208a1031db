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
 * delivery phase's CPU samples (bench/webhooks.ts). A lane with nothing out or waiting is forgotten.
 */
export class ReceiverLanes {
  readonly #lanes = new Map<string, Lane>();

  constructor(private readonly concurrency: number) {}

  /** Runs `task` once one of `receiver`'s slots is free; settles as it does. */
  run<R>(receiver: string, task: () => Promise<R>): Promise<R> {
    const lane = this.#lane(receiver);
    if (lane.running < this.concurrency) {
      lane.running++;
      return this.#go(receiver, lane, task);
    }
    return new Promise<R>((resolve, reject) => lane.waiting.push(() => void this.#go(receiver, lane, task).then(resolve, reject)));
  }

  /** Settles once fewer than `concurrency` of `receiver`'s requests wait for a slot. */
  roomFor(receiver: string): Promise<void> {
    const lane = this.#lanes.get(receiver);
    if (lane === undefined || lane.waiting.length < this.concurrency) return Promise.resolve();
    return new Promise((resolve) => lane.roomWaiters.push(resolve));
  }

  #go<R>(receiver: string, lane: Lane, task: () => Promise<R>): Promise<R> {
    let started: Promise<R>;
    try {
      started = task();
    } catch (error) {
      started = Promise.reject(error);
    }
    // Not `finally`: it makes two more promises a request.
    return started.then(
      (result) => {
        this.#release(receiver, lane);
        return result;
      },
      (error: unknown) => {
        this.#release(receiver, lane);
        throw error;
      },
    );
  }

  #release(receiver: string, lane: Lane): void {
    const next = lane.waiting.shift();
    if (next) next();
    else lane.running--;
    if (lane.waiting.length < this.concurrency && lane.roomWaiters.length > 0) for (const resolve of lane.roomWaiters.splice(0)) resolve();
    if (lane.running === 0 && this.#lanes.get(receiver) === lane) this.#lanes.delete(receiver);
  }

  #lane(receiver: string): Lane {
    let lane = this.#lanes.get(receiver);
    if (lane === undefined) this.#lanes.set(receiver, (lane = { running: 0, waiting: [], roomWaiters: [] }));
    return lane;
  }
}
