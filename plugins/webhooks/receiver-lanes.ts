import PQueue from "p-queue";

/**
 * A receiver is slow when its answers, or the oldest request it has not
 * answered, take longer than this: far above a healthy receiver's time even on
 * a loaded machine, far below the attempt timeout.
 */
export const SLOW_RECEIVER_MS = 1_000;

/**
 * ...and this many times longer than the quickest other receiver with work.
 * Every answer time the kit measures includes its own busy event loop: when it
 * is behind (a burst of thousands of deliveries), every receiver looks slow
 * alike, and putting their deliveries back would only add work. A receiver
 * alone with work is judged by SLOW_RECEIVER_MS only.
 */
export const SLOWER_THAN_OTHERS = 4;

interface Lane {
  queue: PQueue;
  /** Moving average of the receiver's answer times. */
  latencyMs: number;
  /** When each request in flight left. */
  inFlight: Set<number>;
  /** Its deliveries put back in storage for later (their ids): each comes back in its turn. */
  deferred: Set<string>;
}

/** What the lane says to a delivery: go (its request is queued), or come back later. */
export type LaneAnswer<T> = { sending: Promise<T> } | { retryInMs: number };

/**
 * One lane per receiver (scheme, host and port): at most `concurrency`
 * requests in flight, the others queued behind them. A slow receiver (see
 * SLOW_RECEIVER_MS and SLOWER_THAN_OTHERS) keeps as many again queued; its further deliveries are put
 * back in storage, each for its turn behind those put back before it (so a dead
 * receiver's thousands of deliveries come back about as fast as it could take
 * them, not all at every lane's pass), with half a turn of jitter. So a slow or dead
 * receiver holds neither job-runner slots nor more than its lane's memory, and
 * the deliveries to healthy receivers go on; a healthy receiver's queue is
 * bounded by the job runner's limit on jobs waiting outside its slots.
 */
export class ReceiverLanes {
  readonly #lanes = new Map<string, Lane>();

  constructor(
    private readonly concurrency: number,
    private readonly now: () => number = () => performance.now(),
    private readonly random: () => number = Math.random,
  ) {}

  /** Offers delivery `id` to its receiver's lane. */
  offer<T>(origin: string, id: string, send: () => Promise<T>): LaneAnswer<T> {
    const lane = this.#lane(origin);
    const length = lane.queue.size + lane.queue.pending;
    const pace = length < this.concurrency * 2 ? 0 : this.#pace(lane);
    if (pace > SLOW_RECEIVER_MS && pace > SLOWER_THAN_OTHERS * this.#quickestOtherThan(lane)) {
      lane.deferred.add(id);
      return { retryInMs: Math.ceil(((length + lane.deferred.size) / this.concurrency) * pace * (1 + this.random() / 2)) };
    }
    lane.deferred.delete(id);
    return { sending: this.#run(lane, send) };
  }

  #run<T>(lane: Lane, send: () => Promise<T>): Promise<T> {
    return lane.queue.add(async () => {
      const started = this.now();
      lane.inFlight.add(started);
      try {
        return await send();
      } finally {
        lane.inFlight.delete(started);
        lane.latencyMs = 0.8 * lane.latencyMs + 0.2 * (this.now() - started);
      }
    }) as Promise<T>;
  }

  /** The receiver's pace: its average answer time, or the age of its oldest request still out if longer (it stopped answering). */
  #pace(lane: Lane): number {
    const oldest = Math.min(Infinity, ...lane.inFlight);
    return Math.max(lane.latencyMs, Number.isFinite(oldest) ? this.now() - oldest : 0);
  }

  /** The pace of the quickest other lane with work; 0 when it is alone. */
  #quickestOtherThan(lane: Lane): number {
    let quickest = Infinity;
    for (const other of this.#lanes.values()) if (other !== lane) quickest = Math.min(quickest, this.#pace(other));
    return Number.isFinite(quickest) ? quickest : 0;
  }

  #lane(origin: string): Lane {
    let lane = this.#lanes.get(origin);
    if (!lane) {
      const created: Lane = { queue: new PQueue({ concurrency: this.concurrency }), latencyMs: 0, inFlight: new Set(), deferred: new Set() };
      // An idle lane is forgotten, so the map holds only receivers with work (a slow one's pace is kept while it has any).
      created.queue.on("idle", () => {
        if (this.#lanes.get(origin) === created && created.queue.size === 0 && created.queue.pending === 0) this.#lanes.delete(origin);
      });
      this.#lanes.set(origin, (lane = created));
    }
    return lane;
  }
}
