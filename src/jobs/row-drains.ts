import type { Clock } from "../ports/clock.ts";
import type { Collection, Doc, Page, Patch, Storage, Where } from "../ports/storage.ts";
import type { JobContext, JobOutcome } from "./job-definition.ts";
import { RunLaterError } from "./job-record.ts";
import type { Jobs, Retries } from "./jobs.ts";

/** A stored row that is its own queue entry: due from `dueAt`, which is absent once it left the queue. */
export interface QueuedRow extends Doc {
  dueAt?: number;
}

/** What a user of {@link RowDrains} says of its rows, its drains and its attempts. */
export interface RowDrainSpec<Row extends QueuedRow, Payload, Outcome extends string> {
  /** The drain job's type (registered by the user, its handler calling `drain`). */
  jobType: string;
  rows: Collection<Row>;
  /** One live drain per key, across processes (the jobs' active key); arming and a drain's end hold it (`lockKey`). */
  keyOf(payload: Payload): string;
  /** The drain that sends `row`. */
  payloadOf(row: Row): Payload;
  /** The field that names a row's drain: the first field of the rows' sparse `(field, dueAt)` index. */
  drainField: keyof Row & string;
  /** The value of `drainField` of the drain's rows. */
  drainValue(payload: Payload): Row[keyof Row & string];
  /** A row that an attempt left in flight (its in-flight mark); none for rows whose attempts leave no mark in storage. */
  inFlight?: Where<Row>;
  /** The outcomes of an attempt, counted in the drain's job outcome. */
  outcomes: readonly Outcome[];
  /** How many rows a drain reads at a time. */
  pageSize: number;
  /**
   * Rows due at once that have no row in `rows` yet (a webhook's deliveries before their first attempt, read from the
   * deliveries themselves): read after the drain's own rows, with the room they leave in a page.
   */
  fresh?: FreshRows<Row, Payload>;
  /** Settles once the drain may hand over another page. */
  roomFor(payload: Payload): Promise<void>;
  /**
   * For rows whose attempts leave no in-flight mark in storage (the drain alone knows them in flight): the
   * outcome that says an attempt's result could not be stored. Its row is still due; rather than send it
   * again at once (and again, while storage keeps failing), the drain takes no new page and runs again
   * `retryAfterMs` later.
   */
  unrecorded?: { outcome: Outcome; retryAfterMs: number };
  /**
   * Starts an attempt at each row of the page (the drain's due rows in (dueAt, id) order), after marking
   * them in flight in one write committed before any attempt leaves when the rows need it (an attempt
   * that must not be repeated blindly after a crash): one promise per row that settles (never rejects)
   * once its outcome is committed.
   */
  start(page: readonly Row[], payload: Payload, context: JobContext): Promise<Array<Promise<Outcome>>>;
  /** What the drain's job outcome says besides its counts (the sender). */
  describe(payload: Payload): JobOutcome;
}

/** Rows due at once that a drain reads from elsewhere than its rows' collection (RowDrainSpec.fresh). */
export interface FreshRows<Row, Payload> {
  /** A drain run begins. */
  begin(payload: Payload): Promise<void>;
  /** Up to `limit` rows not handed out yet in this run, in order; none once every one is. */
  next(payload: Payload, limit: number): Promise<Row[]>;
  /** In the drain's end transaction, holding its key, every row handed out settled: whether any is left to hand out. */
  left(payload: Payload): Promise<boolean>;
  /** The drain run ended (done, stopped or failed): what it handed out and did not settle is the next run's. */
  end(payload: Payload): void;
}

/**
 * While fresh rows fill a drain's pages, how long its own rows go unread after a read found none due. That read came
 * with every page: a statement each (a round trip on PostgreSQL; on SQLite a statement prepared for each LIMIT, which
 * moves with the rows in flight), put at 1.1-1.3 µs of a webhook delivery's 40-45 µs of main-thread CPU by a profile
 * of bench:webhooks (alone, an empty read costs 2-5 µs: a few tenths of a microsecond a delivery). A row that falls due
 * meanwhile (a retry) goes out at most this much later, and the drain's end reads them whatever the time.
 */
const DUE_RECHECK_MS = 100;

/** When a row whose attempt number `attempts` failed is due again, or undefined after its last attempt. */
export function nextDueAt(retries: Retries, attempts: number, now: number): number | undefined {
  return attempts >= retries.maxAttempts ? undefined : now + retries.backoffMs(attempts);
}

/**
 * Drains of rows that carry their own queue state (`dueAt`, in-flight marks): one job per drain key sends
 * its rows in (dueAt, id) order, a page at a time, and ends when none is due; a row due later queues the
 * drain again for then. No job row per queued row.
 *
 * A new row arms its drain in its own transaction (`arm`). A process alone on its storage knows which
 * drains it queued and for when: a row whose drain runs now, or is queued at or before its due time,
 * writes no job row. With other processes (`Jobs.sharesStorage`) each row enqueues the drain by its key,
 * keeping the earlier time. Either way the drain's end (its last read and its done mark) and a row's
 * arming hold the drain's key (`lockKey`), so a row committed while its drain ends is read by that drain
 * or arms the next one.
 *
 * A drain run after an unfinished one (`attempt > 1`: its process died, or it lost its lease) makes the
 * rows left in flight due at once. A drain that fails its last attempt queues the next one after the
 * jobs' longest backoff, and `rearm` (at every start) queues the drain of every row still due with none:
 * a row is never left due without a drain.
 */
export class RowDrains<Row extends QueuedRow, Payload, Outcome extends string> {
  readonly #armed = new ArmedDrains();

  constructor(
    private readonly spec: RowDrainSpec<Row, Payload, Outcome>,
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly jobs: Jobs,
  ) {
    jobs.whenStarting(() => this.rearm());
  }

  /** In the transaction that stored a row of `payload`'s drain, due at `dueAt`: the drain runs by then. */
  async arm(payload: Payload, dueAt: number): Promise<void> {
    const key = this.spec.keyOf(payload);
    await this.spec.rows.lockKey(key);
    const alone = !this.jobs.sharesStorage && this.storage.afterCommit !== undefined;
    if (alone && this.#armed.covers(key, dueAt)) return;
    const generation = this.#armed.generation(key);
    const job = await this.jobs.enqueue({ type: this.spec.jobType, key, payload, runAt: dueAt, earlier: true });
    // Known once committed: a rolled-back row leaves no drain behind to count on.
    if (alone) await this.storage.afterCommit!(() => this.#armed.queued(key, job.status === "running" ? -Infinity : job.runAt, generation));
  }

  /**
   * Arms the drain of every row still due: those a dead drain left (it failed its last attempt, or
   * storage failed it). One read per drain with due rows, skipping from one drain's rows to the next's
   * on their index; a drain already live is left as it is.
   */
  async rearm(): Promise<number> {
    const { rows, drainField } = this.spec;
    let armed = 0;
    let after: Row[keyof Row & string] | undefined;
    for (;;) {
      // Both fields named, as the sparse index leaves out a row without either.
      const where = { dueAt: { exists: true }, [drainField]: after !== undefined ? { gt: after } : { exists: true } } as Where<Row>;
      const first = await rows.findOne(where, [{ field: drainField }, { field: "dueAt" }]);
      if (!first) return armed;
      after = first[drainField];
      await this.storage.transaction(() => this.arm(this.spec.payloadOf(first), first.dueAt!));
      armed++;
    }
  }

  /** The drain job's handler. */
  async drain(payload: Payload, context: JobContext): Promise<JobOutcome> {
    // It waits on another system: its lane's slot goes to another drain meanwhile.
    context.releaseSlot();
    const key = this.spec.keyOf(payload);
    this.#armed.running(key);
    const mine = { [this.spec.drainField]: this.spec.drainValue(payload) } as Where<Row>;
    // An earlier run of this drain ended unfinished: the rows it left in flight are due now, not when their mark said.
    if (context.attempt > 1 && this.spec.inFlight !== undefined) await this.spec.rows.updateWhere({ ...mine, ...this.spec.inFlight, dueAt: { gt: this.clock.now() } } as Where<Row>, { dueAt: this.clock.now() } as Patch<Row>);
    const counts = Object.fromEntries(this.spec.outcomes.map((outcome) => [outcome, 0])) as Record<Outcome, number>;
    try {
      await this.spec.fresh?.begin(payload);
      for (;;) {
        await this.#sendDue(payload, mine, context, counts);
        if (context.signal.aborted) {
          this.#armed.forget(key);
          throw new RunLaterError(this.clock.now(), "the kit stopped; the drain goes on at the next start");
        }
        if (this.#stalled(counts)) {
          this.#armed.forget(key);
          throw new RunLaterError(this.clock.now() + this.spec.unrecorded!.retryAfterMs, "an attempt's outcome could not be recorded");
        }
        const end = await this.#end(payload, mine, key, context);
        if (end !== "due") return { ...this.spec.describe(payload), ...counts, ...(end === "later" ? { queuedAgain: true } : {}) };
      }
    } catch (error) {
      this.#armed.forget(key);
      if (!(error instanceof RunLaterError) && context.attempt >= context.job.maxAttempts) await this.#queueAfterDeath(payload, key, context);
      throw error;
    } finally {
      this.spec.fresh?.end(payload);
    }
  }

  /** The drain fails for good: the next one, queued beside it, runs after the jobs' longest backoff. */
  async #queueAfterDeath(payload: Payload, key: string, context: JobContext): Promise<void> {
    const runAt = this.clock.now() + this.jobs.retries.backoffMs(context.attempt);
    try {
      await this.jobs.enqueue({ type: this.spec.jobType, key, payload, runAt, replace: true });
    } catch (error) {
      context.logger.error("the next drain could not be queued; it is queued at the next start", { key, error });
    }
  }

  /** Whether an attempt's outcome could not be recorded: its row, still due, waits for the drain's next run. */
  #stalled(counts: Record<Outcome, number>): boolean {
    return this.spec.unrecorded !== undefined && counts[this.spec.unrecorded.outcome] > 0;
  }

  /** Sends the drain's due rows, a page at a time, until none is due or the kit stops; settles once every outcome is committed. */
  async #sendDue(payload: Payload, mine: Where<Row>, context: JobContext, counts: Record<Outcome, number>): Promise<void> {
    const inFlight = new Map<string, Promise<void>>();
    try {
      await this.#sendPages(payload, mine, context, counts, inFlight);
    } finally {
      // Never ends with a row of its own still in flight, even on a failed read: the next run would take it for a dead run's.
      await Promise.all(inFlight.values());
    }
  }

  /**
   * Reads on after the last page's last row while pages come full: a read from the queue's head would read
   * again every row still in flight (rows whose attempts leave no in-flight mark stay due while out). A
   * page that comes short sends the next read back to the head, skipping the rows in flight: it finds a row
   * that became due before the last page's rows meanwhile (another process's clock).
   */
  async #sendPages(payload: Payload, mine: Where<Row>, context: JobContext, counts: Record<Outcome, number>, inFlight: Map<string, Promise<void>>): Promise<void> {
    let after: string | undefined;
    /** When a read from the head last found none of the drain's own rows due, while fresh rows filled the page. */
    let noneDueAt = -Infinity;
    while (!context.signal.aborted && !this.#stalled(counts)) {
      await this.spec.roomFor(payload);
      if (context.signal.aborted) break;
      const fromHead = after === undefined;
      const now = this.clock.now();
      const read = !fromHead || now - noneDueAt >= DUE_RECHECK_MS;
      const due: Page<Row> = read
        ? await this.spec.rows.find({
            where: { ...mine, dueAt: { lte: now } } as Where<Row>,
            orderBy: [{ field: "dueAt" }, { field: "id" }],
            limit: fromHead ? this.spec.pageSize + inFlight.size : this.spec.pageSize,
            after,
          })
        : { items: [] };
      after = due.nextCursor;
      // One whose attempt outlasted its in-flight mark is still this drain's to finish.
      const page = due.items.filter((row) => !inFlight.has(row.id));
      if (this.spec.fresh !== undefined && page.length < this.spec.pageSize) {
        const fresh = await this.spec.fresh.next(payload, this.spec.pageSize - page.length);
        // Read again at the next page once the fresh rows run short: the drain goes on with its own rows.
        if (page.length + fresh.length < this.spec.pageSize) noneDueAt = -Infinity;
        else if (read && fromHead && due.items.length === 0) noneDueAt = now;
        page.push(...fresh);
      }
      if (page.length === 0) {
        // Not a read of its own rows (skipped): the next is.
        if (!fromHead || !read) continue;
        if (due.items.length === 0 || inFlight.size === 0) break;
        await Promise.race(inFlight.values());
        continue;
      }
      const outcomes = await this.spec.start(page, payload, context);
      page.forEach((row, index) => {
        const settled = outcomes[index]!.then((outcome) => {
          counts[outcome]++;
          inFlight.delete(row.id);
        });
        inFlight.set(row.id, settled);
      });
    }
  }

  /**
   * The drain's last read and its end in one transaction, holding its key: a row due now goes on with
   * this drain; one due later queues the next drain for then; none, the drain is done.
   */
  #end(payload: Payload, mine: Where<Row>, key: string, context: JobContext): Promise<"due" | "later" | "done"> {
    return this.storage.transaction(async () => {
      await this.spec.rows.lockKey(key);
      if (await this.spec.fresh?.left(payload)) return "due";
      const next = await this.spec.rows.findOne({ ...mine, dueAt: { exists: true } } as Where<Row>, [{ field: "dueAt" }, { field: "id" }]);
      if (next && next.dueAt! <= this.clock.now()) return "due";
      await context.markDone();
      if (!next) {
        this.#armed.ended(key);
        return "done";
      }
      // A job of its own rather than this one run later: a row due before it moves it earlier (a running job cannot be).
      const queued = await this.jobs.enqueue({ type: context.job.type, key, payload, runAt: next.dueAt! });
      this.#armed.ended(key, queued.runAt);
      return "later";
    });
  }
}

/**
 * What a process alone on its storage knows of its drains: for each key, when its live drain runs
 * (-Infinity while it runs: it reads every row committed before its end). A drain's end moves the key
 * to a new generation: an arming that committed before it but is told after it (its after-commit work
 * ran late) is not kept.
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

  /** Nothing is known of `key`'s drain any more (it failed, or the kit stops): the next row enqueues it by its key. */
  forget(key: string): void {
    this.#generations.set(key, this.generation(key) + 1);
    this.#at.delete(key);
  }
}
