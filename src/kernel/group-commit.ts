import type { Storage } from "../ports/storage.ts";
import { defineToken } from "./token.ts";

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * How a caller learns its write's outcome: its promise's own functions, not a closure made per write (under tsx,
 * which names each closure as it is made, that closure cost about 3 µs a webhook delivery).
 */
interface Settles {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** What one caller writes in a group (its own write, or an item of a batch write), and how it learns the outcome. */
type Member = ({ write: (group: GroupWrite) => Promise<unknown> } | { batch: BatchWrite<unknown, unknown>; item: unknown }) & Settles;

/** What a group writes in one savepoint: a member's own write, or the items of one batch write, with where their outcomes go. */
interface Unit {
  members: Member[];
  write: (group: GroupWrite) => Promise<readonly unknown[]>;
  /** Whether it runs in a savepoint of its own when it shares the group's transaction (GroupCommitOptions.savepoints). */
  savepoint: boolean;
}

export interface GroupCommitOptions {
  /**
   * Whether each write of a group runs in a savepoint of its own (default true), so that one that throws
   * rolls back alone. Without, a write that throws still fails its caller alone, but what it wrote
   * before it threw commits with the group: for writes that are one statement each, or whose partial
   * effect is harmless. A batch write then goes without its savepoint too: its `writeAll` must be atomic
   * on its own (one statement, or a storage call such as `updateEach`), as its items are written again
   * alone should it throw.
   */
  savepoints?: boolean;
  /**
   * How long a group gathers writes, in milliseconds from its first one, before it commits (default 0: the
   * writes of one turn of the event loop). Writes that arrive a turn apart each (webhook attempts answered
   * one by one) then share a commit: what a caller waits at most, besides the commit itself (and the one
   * before it, should a group be committing when it asks), is `gatherMs`. The timer keeps the process
   * alive, so a gathering group commits even while the kit stops (whose jobs wait for their writes).
   */
  gatherMs?: number;
  /**
   * How many writes make a gathering group (`gatherMs` above 0) commit at once, without waiting out
   * `gatherMs` (default 256): a burst needs no more of a wait to share a commit, and waiting on would hold
   * its callers (and what they hold: a receiver's request slots) for nothing.
   */
  maxGroupSize?: number;
}

const DEFAULT_MAX_GROUP_SIZE = 256;

/**
 * Small writes of callers that run at the same time, committed together: the
 * writes asked during one turn of the event loop (or within `gatherMs` of the
 * group's first: GroupCommitOptions) by its callers (events posted over HTTP,
 * the outcomes of texts the provider answered together, webhook attempts with
 * their jobs' done marks, a bulk writer's rows) commit in one storage
 * transaction, each in a savepoint of its own (a nested transaction). A write
 * that throws rolls back alone and its caller gets its error; the others
 * commit; each caller is answered only once the shared commit is done, so
 * nothing acknowledged can be lost. What a transaction costs besides its
 * writes (the storage's lock, BEGIN and COMMIT, the pages written to SQLite's
 * WAL) is then paid once per group rather than once per write. Writes asked
 * while a group commits form the next group, written right after it. The
 * items that the group's writes defer to a {@link BulkWrite} (their jobs' done
 * marks) are written after every write of the group, in one call, before the
 * commit.
 *
 * Callers whose writes differ only by an item (texts moved to sent, each
 * with its provider's id) ask them as a {@link BatchWrite} (`runBatched`): a
 * group writes the items of each batch with one call, in one savepoint, as
 * one write.
 *
 * A caller that knows others are under way with it (the texts the provider
 * is answering, webhook requests out) runs as a participant
 * (`participate`): while participants are under way, a group commits as
 * soon as each of them has asked its write or ended, instead of at the end of
 * the turn.
 *
 * Only for callers outside any transaction (a route handler, a job handler
 * that waited on another system): the shared transaction begins later, in
 * another async context, so a caller inside its own transaction would wait
 * for it forever.
 *
 * Writes that are one statement each, or whose partial effect is harmless (a
 * webhook's delivery outcomes), may go without their savepoints
 * (`savepoints: false`): inside one, SQLite copies every page a write touches,
 * which cost about as much again as the write itself.
 *
 * On a storage whose transactions run side by side
 * (`transactionsRunConcurrently`, PostgreSQL) each write runs in a transaction
 * of its own at once instead: there a group would make the writes wait for
 * each other on one connection, a round trip after another, where their own
 * transactions run in parallel on the pool (bench/events.ts measured it).
 */
export class GroupCommit {
  #next: Member[] = [];
  #flushing: Promise<void> | undefined;
  #participants = 0;
  /** Ends the wait of the group not yet committing (set while it waits for the turn's end or its gathering time). */
  #commitNow: (() => void) | undefined;

  readonly #gatherMs: number;
  /** The size at which a group commits without waiting longer: only a gathering group has one. */
  readonly #gatherUpTo: number;

  constructor(
    private readonly storage: Pick<Storage, "transaction" | "transactionsRunConcurrently">,
    private readonly options: GroupCommitOptions = {},
  ) {
    const { gatherMs = 0, maxGroupSize = DEFAULT_MAX_GROUP_SIZE } = options;
    if (!Number.isFinite(gatherMs) || gatherMs < 0) throw new RangeError(`GroupCommit: gatherMs must be a finite number of at least 0, got ${String(gatherMs)}`);
    if (!Number.isSafeInteger(maxGroupSize) || maxGroupSize < 1) throw new RangeError(`GroupCommit: maxGroupSize must be a whole number of at least 1, got ${String(maxGroupSize)}`);
    this.#gatherMs = gatherMs;
    this.#gatherUpTo = gatherMs === 0 ? Number.POSITIVE_INFINITY : maxGroupSize;
  }

  /**
   * Runs `write` in the next shared transaction; resolves with its result once that transaction committed.
   * `write` gets the group's handle for its deferred bulk writes (a job's done mark: `context.markDone(group)`).
   */
  run<R>(write: (group: GroupWrite) => Promise<R>): Promise<R> {
    if (this.storage.transactionsRunConcurrently) return this.storage.transaction(() => BulkWrites.around(write));
    return new Promise<R>((resolve, reject) => {
      this.#next.push({ write, resolve: resolve as Settles["resolve"], reject });
      this.#schedule();
    });
  }

  /**
   * Writes `item` with the other items of `batch` asked for the same group, in one call of its `writeAll`;
   * resolves with the item's result once the group committed. Should that call throw, each item is written
   * again alone (one item's failure stays its own). Alone in its own transaction on a storage whose
   * transactions run side by side.
   */
  runBatched<T, R>(batch: BatchWrite<T, R>, item: T): Promise<R> {
    if (this.storage.transactionsRunConcurrently) return this.storage.transaction(() => batch.writeOne(item));
    return new Promise<R>((resolve, reject) => {
      this.#next.push({ batch: batch as BatchWrite<unknown, unknown>, item, resolve: resolve as Settles["resolve"], reject });
      this.#schedule();
    });
  }

  /** Runs `work`, which may ask one write with `run` or `runBatched`, as a participant: a group waits for its write or its end, not for the turn's end. */
  async participate<R>(work: () => Promise<R>): Promise<R> {
    this.#participants++;
    try {
      return await work();
    } finally {
      this.#participants--;
      // It may have ended without writing: the others' group may be complete now.
      if (this.#next.length > 0) this.#schedule();
    }
  }

  #schedule(): void {
    const complete = (this.#participants > 0 && this.#next.length >= this.#participants) || this.#next.length >= this.#gatherUpTo;
    if (this.#flushing) {
      // A group waiting for the turn's end (or its gathering time) that is complete now commits at once.
      if (complete) this.#commitNow?.();
      return;
    }
    this.#flushing = new Promise<void>((ready) => {
      if (complete) {
        queueMicrotask(ready);
        return;
      }
      if (this.#gatherMs === 0) {
        this.#commitNow = ready;
        setImmediate(ready);
        return;
      }
      const timer = setTimeout(ready, this.#gatherMs);
      this.#commitNow = () => {
        clearTimeout(timer);
        ready();
      };
    }).then(() => {
      this.#commitNow = undefined;
      return this.#flush();
    });
  }

  async #flush(): Promise<void> {
    while (this.#next.length > 0) {
      const group = this.#next;
      this.#next = [];
      const outcomes = await this.#commit(group);
      for (let index = 0; index < group.length; index++) {
        const member = group[index]!;
        const outcome = outcomes[index]!;
        if (outcome.ok) member.resolve(outcome.value);
        else member.reject(outcome.error);
      }
    }
    this.#flushing = undefined;
  }

  async #commit(group: readonly Member[]): Promise<Outcome[]> {
    const units = unitsOf(group, this.options.savepoints ?? true);
    const outcomes = new Map<Member, Outcome>();
    if (units.length === 1) {
      // Alone: its own transaction, without a savepoint.
      const [unit] = units as [Unit];
      try {
        const values = await this.storage.transaction(() => BulkWrites.around(unit.write));
        unit.members.forEach((member, index) => outcomes.set(member, { ok: true, value: values[index] }));
      } catch (error) {
        if (unit.members.length === 1) return [{ ok: false, error }];
        for (const member of unit.members) outcomes.set(member, await this.#alone(member));
      }
      return group.map((member) => outcomes.get(member)!);
    }
    try {
      await this.storage.transaction(async () => {
        const bulk = new BulkWrites();
        for (const unit of units) {
          try {
            const values = await bulk.member((member) => (unit.savepoint ? this.storage.transaction(() => unit.write(member)) : unit.write(member)));
            unit.members.forEach((member, index) => outcomes.set(member, { ok: true, value: values[index] }));
          } catch (error) {
            if (unit.members.length === 1) outcomes.set(unit.members[0]!, { ok: false, error });
            else for (const member of unit.members) outcomes.set(member, await this.#alone(member));
          }
        }
        await bulk.write();
      });
    } catch (error) {
      // The commit failed: nothing of the group was stored.
      return group.map(() => ({ ok: false, error }));
    }
    return group.map((member) => outcomes.get(member)!);
  }

  /**
   * An item of a batch that failed, written alone (in a savepoint of the group's transaction, or in a
   * transaction of its own), so that only the item at fault fails.
   */
  #alone(member: Member): Promise<Outcome> {
    const { batch, item } = member as Extract<Member, { batch: unknown }>;
    return this.storage.transaction(() => batch.writeOne(item)).then(
      (value): Outcome => ({ ok: true, value }),
      (error: unknown): Outcome => ({ ok: false, error }),
    );
  }
}

/** A group's writes in order: each member's own, and each batch's items together where its first item was asked. */
function unitsOf(group: readonly Member[], savepoints: boolean): Unit[] {
  const units: Unit[] = [];
  const batches = new Map<BatchWrite<unknown, unknown>, Unit>();
  for (const member of group) {
    if ("write" in member) {
      units.push({ members: [member], write: async (handle) => [await member.write(handle)], savepoint: savepoints });
      continue;
    }
    const unit = batches.get(member.batch);
    if (unit) {
      unit.members.push(member);
      continue;
    }
    const batched: Unit = { members: [member], write: () => member.batch.writeAll(batched.members.map((each) => (each as Extract<Member, { batch: unknown }>).item)), savepoint: savepoints };
    batches.set(member.batch, batched);
    units.push(batched);
  }
  return units;
}

/**
 * A write that many callers each ask with an item of their own (a text moved to sent with its provider's
 * id), made for the items of a group with one call of `writeAll` (GroupCommit.runBatched): one savepoint
 * for a page of texts instead of one each, and what the items have in common written once. `writeAll`
 * answers each item in order, inside the group's transaction.
 */
export class BatchWrite<T, R> {
  constructor(readonly writeAll: (items: readonly T[]) => Promise<readonly R[]>) {}

  /** `writeAll` of one item. */
  async writeOne(item: T): Promise<R> {
    const [result] = await this.writeAll([item]);
    return result as R;
  }
}

/**
 * What a write of a group gets (`run`'s `write(group)`): `defer` adds an item to
 * a bulk write of the group. Handed to the write rather than found in its async
 * context: a second AsyncLocalStorage makes every promise of the process dearer
 * (about 100 ns each, measured alone; the storage has one already).
 */
export interface GroupWrite {
  /**
   * Adds `item` to the group's `bulk` write, written after the group's last write, before its commit, and
   * dropped if this write throws. Not written yet when it returns: a read in the same write does not see it.
   * Ignored once this write has ended.
   */
  defer<T>(bulk: BulkWrite<T>, item: T): void;
}

/**
 * A write that many members of one group would each make alone (a job's done
 * mark), made once for the group: each member defers an item to it
 * (`GroupWrite.defer`), and the group writes the items of every member whose
 * write succeeded with one call of `writeAll`, in its transaction, before the
 * commit. A member's write that throws rolls back alone and its items are
 * dropped with it.
 */
export class BulkWrite<T> {
  constructor(private readonly writeAll: (items: readonly T[]) => Promise<void>) {}

  /** Writes the items of a group (BulkWrites). */
  write(items: readonly unknown[]): Promise<void> {
    return this.writeAll(items as readonly T[]);
  }
}

/** The bulk writes of one group: each member's items, kept when its write succeeds, written together by `write`. */
export class BulkWrites {
  readonly #items = new Map<BulkWrite<unknown>, unknown[]>();

  /** Runs `write` as the group's only member, then its bulk writes: for a transaction of one write. */
  static async around<R>(write: (group: GroupWrite) => Promise<R>): Promise<R> {
    const bulk = new BulkWrites();
    const value = await bulk.member(write);
    await bulk.write();
    return value;
  }

  /** Runs one member's write; what it defers joins the group's bulk writes if it succeeds. */
  async member<R>(write: (group: GroupWrite) => Promise<R>): Promise<R> {
    let open = true;
    const deferred = new Map<BulkWrite<unknown>, unknown[]>();
    const group: GroupWrite = {
      defer(bulk, item) {
        if (!open) return;
        const items = deferred.get(bulk as BulkWrite<unknown>);
        if (items) items.push(item);
        else deferred.set(bulk as BulkWrite<unknown>, [item]);
      },
    };
    try {
      const value = await write(group);
      for (const [bulk, items] of deferred) {
        const all = this.#items.get(bulk);
        if (all) all.push(...items);
        else this.#items.set(bulk, items);
      }
      return value;
    } finally {
      open = false;
    }
  }

  /** Writes every bulk write's items, each in one call, in the caller's transaction. */
  async write(): Promise<void> {
    for (const [bulk, items] of this.#items) await bulk.write(items);
    this.#items.clear();
  }
}

/**
 * The kit's shared group commit, for callers that do not run as participants:
 * events posted over HTTP, short-link clicks, bulk writers.
 * Their writes of one turn of the event loop share a commit.
 */
export const GROUP_COMMIT = defineToken<GroupCommit>("GroupCommit", ["reachkit core (always bound)"]);
