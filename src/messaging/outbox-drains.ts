import type { JobContext, JobOutcome } from "../jobs/job-definition.ts";
import { RunLaterError } from "../jobs/job-record.ts";
import type { Jobs } from "../jobs/jobs.ts";
import type { Clock } from "../ports/clock.ts";
import type { Collection, Storage } from "../ports/storage.ts";
import type { AttemptOutcome, OutboxDeliveries } from "./outbox-deliveries.ts";
import { channelOf, type OutboxChannel, type OutboxMessage } from "./outbox-record.ts";

/** The job that sends one sender's queued messages, one live per sender. */
export const OUTBOX_DRAIN_JOB = "reachkit.outbox.drain";

export interface DrainPayload {
  channel: OutboxChannel;
  /** The sender number, or an email's From. */
  from: string;
}

/** One live drain per sender, across processes: the jobs' active key. */
export const drainKey = (sender: DrainPayload): string => `outbox-drain:${sender.channel}:${sender.from}`;

/**
 * The drains of the outbox: one job per sender (channel + from) sends its queued messages in (dueAt, id)
 * order, a page at a time through OutboxDeliveries, and ends when none is due; a message due later
 * queues the drain again for then.
 *
 * A new message arms its sender's drain in its own transaction. A process alone on its storage knows
 * which drains it queued and for when (`#armed`): a message whose drain runs now, or is queued at or
 * before its due time, writes no job row. With other processes (`Jobs.sharesStorage`) each message
 * enqueues the drain by its key, keeping the earlier time. Either way the drain's end (its last read
 * and its done mark) and a message's arming hold the sender's key (`lockKey`), so a message committed
 * while its drain ends is read by that drain or arms the next one.
 */
export class OutboxDrains {
  readonly #armed = new ArmedDrains();

  constructor(
    private readonly messages: Collection<OutboxMessage>,
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly jobs: Jobs,
    private readonly deliveries: OutboxDeliveries,
  ) {}

  /** In the transaction that stored `message` (queued, with its `dueAt`): its sender's drain runs by then. */
  async arm(message: OutboxMessage): Promise<void> {
    const sender: DrainPayload = { channel: channelOf(message), from: message.from };
    const key = drainKey(sender);
    const dueAt = message.dueAt!;
    await this.messages.lockKey(key);
    const alone = !this.jobs.sharesStorage && this.storage.afterCommit !== undefined;
    if (alone && this.#armed.covers(key, dueAt)) return;
    const generation = this.#armed.generation(key);
    const job = await this.jobs.enqueue({ type: OUTBOX_DRAIN_JOB, key, payload: sender, runAt: dueAt, earlier: true });
    // Known once committed: a rolled-back message leaves no drain behind to count on.
    if (alone) await this.storage.afterCommit!(() => this.#armed.queued(key, job.status === "running" ? -Infinity : job.runAt, generation));
  }

  /** The drain job's handler. */
  async drain(sender: DrainPayload, context: JobContext): Promise<JobOutcome> {
    // It waits on the provider: its lane's slot goes to another sender's drain meanwhile.
    context.releaseSlot();
    const key = drainKey(sender);
    this.#armed.running(key);
    // An earlier run of this drain ended unfinished (its process died, or it lost its lease): the messages it left in
    // flight are due now, not a minute after that attempt (each asks the provider before it is sent again).
    if (context.attempt > 1) await this.messages.updateWhere({ from: sender.from, inFlightSince: { exists: true }, dueAt: { gt: this.clock.now() } }, { dueAt: this.clock.now() });
    const counts: Record<AttemptOutcome, number> = { sent: 0, failed: 0, retrying: 0, unrecorded: 0 };
    try {
      for (;;) {
        await this.#sendDue(sender, context, counts);
        if (context.signal.aborted) {
          this.#armed.forget(key);
          throw new RunLaterError(this.clock.now(), "the kit stopped; the drain goes on at the next start");
        }
        const end = await this.#end(sender, key, context);
        if (end !== "due") return { from: sender.from, ...counts, ...(end === "later" ? { queuedAgain: true } : {}) };
      }
    } catch (error) {
      this.#armed.forget(key);
      throw error;
    }
  }

  /**
   * Sends the sender's due messages, a page at a time, until none is due or the kit stops; settles once
   * every outcome is committed, counted in `counts`.
   */
  async #sendDue(sender: DrainPayload, context: JobContext, counts: Record<AttemptOutcome, number>): Promise<void> {
    const inFlight = new Map<string, Promise<void>>();
    try {
      await this.#sendPages(sender, context, counts, inFlight);
    } finally {
      // Never ends with a message of its own still in flight, even on a failed read: the next run would take it for a dead run's.
      await Promise.all(inFlight.values());
    }
  }

  async #sendPages(sender: DrainPayload, context: JobContext, counts: Record<AttemptOutcome, number>, inFlight: Map<string, Promise<void>>): Promise<void> {
    while (!context.signal.aborted) {
      await this.deliveries.roomFor(sender);
      if (context.signal.aborted) break;
      const now = this.clock.now();
      const due = await this.messages.find({
        where: { from: sender.from, dueAt: { lte: now } },
        orderBy: [{ field: "dueAt" }, { field: "id" }],
        limit: this.deliveries.pageSize + inFlight.size,
      });
      // One whose attempt outlasted its in-flight mark is still this drain's to finish.
      const page = due.items.filter((message) => !inFlight.has(message.id));
      if (page.length === 0) {
        if (due.items.length === 0 || inFlight.size === 0) break;
        await Promise.race(inFlight.values());
        continue;
      }
      const outcomes = await this.deliveries.start(page, { logger: context.logger });
      page.forEach((message, index) => {
        const settled = outcomes[index]!.then((outcome) => {
          counts[outcome]++;
          inFlight.delete(message.id);
        });
        inFlight.set(message.id, settled);
      });
    }
  }

  /**
   * The drain's last read and its end in one transaction, holding the sender's key: a message due now
   * goes on with this drain; one due later queues the next drain for then; none, the drain is done.
   */
  #end(sender: DrainPayload, key: string, context: JobContext): Promise<"due" | "later" | "done"> {
    return this.storage.transaction(async () => {
      await this.messages.lockKey(key);
      const next = await this.messages.findOne({ from: sender.from, dueAt: { exists: true } }, [{ field: "dueAt" }, { field: "id" }]);
      if (next && next.dueAt! <= this.clock.now()) return "due";
      await context.markDone();
      if (!next) {
        this.#armed.ended(key);
        return "done";
      }
      // A job of its own rather than this one run later: a message due before it moves it earlier (a running job cannot be).
      const queued = await this.jobs.enqueue({ type: context.job.type, key, payload: sender, runAt: next.dueAt! });
      this.#armed.ended(key, queued.runAt);
      return "later";
    });
  }
}

/**
 * What a process alone on its storage knows of its drains: for each sender, when its live drain runs
 * (-Infinity while it runs: it reads every message committed before its end). A drain's end moves the
 * sender to a new generation: a message's arming that committed before it but is told after it (its
 * after-commit work ran late) is not kept.
 */
class ArmedDrains {
  readonly #at = new Map<string, number>();
  readonly #generations = new Map<string, number>();

  /** Whether a live drain of `key` runs at or before `dueAt`. */
  covers(key: string, dueAt: number): boolean {
    const at = this.#at.get(key);
    return at !== undefined && at <= dueAt;
  }

  generation(key: string): number {
    return this.#generations.get(key) ?? 0;
  }

  /** A drain of `key` is queued for `at`, as known in `generation`. */
  queued(key: string, at: number, generation: number): void {
    if (this.generation(key) !== generation) return;
    this.#at.set(key, Math.min(at, this.#at.get(key) ?? Infinity));
  }

  running(key: string): void {
    this.#at.set(key, -Infinity);
  }

  /** The drain of `key` ended, its next queued for `next` if any. */
  ended(key: string, next?: number): void {
    this.#generations.set(key, this.generation(key) + 1);
    if (next === undefined) this.#at.delete(key);
    else this.#at.set(key, next);
  }

  /** Nothing is known of `key`'s drain any more (it failed, or the kit stops): the next message enqueues it by its key. */
  forget(key: string): void {
    this.#generations.set(key, this.generation(key) + 1);
    this.#at.delete(key);
  }
}
