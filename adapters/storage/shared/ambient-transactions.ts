import { AsyncLocalStorage } from "node:async_hooks";
import { assertLockKey } from "./documents.ts";

/** A FIFO lock. Release hands it straight to the next waiter, so nobody can barge in between. */
export class Mutex {
  #locked = false;
  readonly #waiters: Array<() => void> = [];

  get locked(): boolean {
    return this.#locked;
  }

  acquire(): Promise<void> {
    if (!this.#locked) {
      this.#locked = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  release(): void {
    const next = this.#waiters.shift();
    if (next === undefined) this.#locked = false;
    else next();
  }
}

/**
 * What a storage engine does at each transaction boundary: synchronous for an
 * embedded engine, asynchronous for a networked one (each hook is awaited). A
 * hook that fails in `begin` or `savepoint` fails the transaction before fn
 * runs. `begin` returns the transaction's connection (C), handed back to every
 * later hook of that transaction: an engine whose transactions run side by side
 * keeps each one's state there; one with a single store has none (void).
 */
export interface TransactionHooks<M, C = void> {
  begin(): C | Promise<C>;
  commit(connection: C): void | Promise<void>;
  rollback(connection: C): void | Promise<void>;
  /** Opens a nested scope and returns what is needed to end it. */
  savepoint(connection: C): M | Promise<M>;
  release(mark: M, connection: C): void | Promise<void>;
  rollbackTo(mark: M, connection: C): void | Promise<void>;
}

export interface AmbientTransactionOptions {
  /**
   * Root transactions of different async contexts run side by side (each on
   * the connection its `begin` returned) instead of one at a time; calls from
   * outside a transaction then never wait for one. For a networked engine
   * whose own isolation keeps concurrent transactions apart.
   */
  concurrent?: boolean;
}

/**
 * One `transaction()` scope. The root frame's `active` flag is what every
 * operation checks: async work that outlives its transaction still carries the
 * frame in its context, and must then behave like an outside caller.
 */
class Frame {
  readonly root: Frame;
  active = true;
  /** What the engine's `begin` returned; set on the root frame only. */
  connection: unknown;
  /** Serialises nested transactions opened from this frame, so savepoints stay strictly LIFO. */
  readonly children = new Mutex();
  /** Work to run once the root commits: handed to the parent when this scope's writes are kept, dropped when they are undone. */
  afterCommit: Array<() => unknown> = [];

  constructor(readonly parent: Frame | undefined) {
    this.root = parent?.root ?? this;
  }
}

/** `operation`'s result now, its throw a rejection. */
function settledNow<R>(operation: () => R): Promise<R> {
  try {
    return Promise.resolve(operation());
  } catch (error) {
    return Promise.reject(error);
  }
}

function openAncestor(frame: Frame | undefined): Frame | undefined {
  for (let current = frame; current !== undefined; current = current.parent) {
    if (current.active) return current;
  }
  return undefined;
}

/**
 * Ambient transactions: a call made anywhere in the async context of
 * `transaction(fn)` joins it. Over a single store (one SQLite connection, one
 * in-process map) every other caller waits on one mutex until it ends;
 * operations are synchronous closures, so outside a transaction they run
 * immediately when nobody holds the mutex. With `concurrent` (PostgreSQL, a
 * pooled connection per transaction) transactions of different contexts run
 * side by side and nothing waits on the mutex.
 *
 * Nested `transaction()` calls join the outer one through a savepoint: when the
 * inner fn throws, only its writes are undone and the error propagates (the
 * outer fn may catch it and carry on). Both storage adapters use this class, so
 * a fix here reaches both.
 */
export class AmbientTransactions<M, C = void> {
  readonly #context = new AsyncLocalStorage<Frame>();
  readonly #lock = new Mutex();
  readonly #hooks: TransactionHooks<M, C>;
  readonly #concurrent: boolean;
  #openRoots = 0;

  constructor(hooks: TransactionHooks<M, C>, options: AmbientTransactionOptions = {}) {
    this.#hooks = hooks;
    this.#concurrent = options.concurrent === true;
  }

  /** Whether the calling async context is inside a transaction that is still open. */
  inTransaction(): boolean {
    return this.#context.getStore()?.root.active === true;
  }

  /** Throws unless the caller is inside an open transaction: for a hold that lasts to its end (`getForUpdate`, `lockKey`). */
  assertInTransaction(operation: string): void {
    if (!this.inTransaction()) throw new Error(`${operation} holds until the end of a transaction: call it inside storage.transaction()`);
  }

  /** The connection of the caller's open transaction (what `begin` returned), if any. */
  connection(): C | undefined {
    const root = this.#context.getStore()?.root;
    return root?.active === true ? (root.connection as C) : undefined;
  }

  /**
   * Runs `work` once the caller's transaction has committed, after the lock is
   * released (at once outside a transaction); never when the transaction, or
   * the nested one that registered it, rolls back. The root `transaction()`
   * resolves after the work has settled; a failure of the work is the work's
   * own to report and does not fail the committed transaction.
   */
  afterCommit(work: () => unknown): Promise<void> {
    const frame = openAncestor(this.#context.getStore());
    if (frame === undefined) return runQuietly([work]);
    frame.afterCommit.push(work);
    return Promise.resolve();
  }

  /** Runs a synchronous operation in the caller's transaction, or alone between transactions. */
  run<R>(operation: () => R): Promise<R> {
    if (!this.#lock.locked || this.inTransaction()) return settledNow(operation);
    return this.#lock.acquire().then(() => {
      try {
        return operation();
      } finally {
        this.#lock.release();
      }
    });
  }

  /**
   * Like `run`, for an asynchronous operation (a networked engine's query):
   * between transactions it runs at once, beside other such operations; while
   * another context's transaction is open it waits, and holds the lock until
   * it settles, so it lands between that transaction and the next (with
   * `concurrent`, it never waits).
   */
  runAsync<R>(operation: () => Promise<R>): Promise<R> {
    if (!this.#lock.locked || this.inTransaction()) {
      try {
        return operation();
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return this.#lock.acquire().then(async () => {
      try {
        return await operation();
      } finally {
        this.#lock.release();
      }
    });
  }

  /** `outside` for an asynchronous operation (see runAsync). */
  outsideAsync<R>(operation: string, work: () => Promise<R>): Promise<R> {
    if (this.inTransaction()) return Promise.reject(new Error(`${operation} cannot run inside a transaction`));
    return this.runAsync(work);
  }

  /**
   * Like `run`, for work that must not join a transaction: schema changes
   * (their effect on the adapter's state would not roll back) and close (it
   * would wait for its own transaction to end).
   */
  outside<R>(operation: string, work: () => R): Promise<R> {
    if (this.inTransaction()) return Promise.reject(new Error(`${operation} cannot run inside a transaction`));
    return this.run(work);
  }

  async transaction<R>(fn: () => Promise<R>): Promise<R> {
    const parent = openAncestor(this.#context.getStore());
    if (parent !== undefined) return this.#nested(parent, fn);

    if (!this.#concurrent) await this.#lock.acquire();
    const root = new Frame(undefined);
    this.#openRoots++;
    let connection: C;
    try {
      connection = await this.#hooks.begin();
    } catch (error) {
      root.active = false;
      this.#rootEnded();
      throw error;
    }
    root.connection = connection;
    let result: R;
    try {
      result = await this.#settle(root, fn, () => this.#hooks.commit(connection), () => this.#hooks.rollback(connection));
    } finally {
      this.#rootEnded();
    }
    if (root.afterCommit.length > 0) await runQuietly(root.afterCommit);
    return result;
  }

  #rootEnded(): void {
    // With no transaction open nothing needs the context. Disabled, it stops costing every promise of
    // the process three hook calls (Node 20 tracks promises for it); the next transaction's run()
    // enables it again. Node defers turning its promise hooks off past the current continuation,
    // and async work left over from this transaction reads "no transaction", as it must. Never while
    // another transaction runs beside this one: its context would read "no transaction" too.
    if (--this.#openRoots === 0) this.#context.disable();
    if (!this.#concurrent) this.#lock.release();
  }

  async #nested<R>(from: Frame, fn: () => Promise<R>): Promise<R> {
    let parent: Frame | undefined = from;
    for (;;) {
      await parent.children.acquire();
      if (parent.active) break;
      // The parent ended while we queued: attach to the nearest scope still open.
      parent.children.release();
      parent = openAncestor(parent);
      if (parent === undefined) return this.transaction(fn);
    }
    const frame = new Frame(parent);
    let mark: M;
    try {
      mark = await this.#hooks.savepoint(frame.root.connection as C);
    } catch (error) {
      frame.active = false;
      parent.children.release();
      throw error;
    }
    try {
      const result = await this.#settle(
        frame,
        fn,
        () => this.#hooks.release(mark, frame.root.connection as C),
        () => this.#hooks.rollbackTo(mark, frame.root.connection as C),
      );
      parent.afterCommit.push(...frame.afterCommit);
      return result;
    } finally {
      parent.children.release();
    }
  }

  async #settle<R>(
    frame: Frame,
    fn: () => Promise<R>,
    commit: () => void | Promise<void>,
    rollback: () => void | Promise<void>,
  ): Promise<R> {
    let result: R;
    try {
      result = await this.#context.run(frame, fn);
    } catch (error) {
      await this.#end(frame);
      try {
        await rollback();
      } catch {
        // The caller needs fn's error, not the secondary rollback failure.
      }
      throw error;
    }
    await this.#end(frame);
    try {
      await commit();
    } catch (error) {
      try {
        await rollback();
      } catch {
        // Same as above: report the commit failure.
      }
      throw error;
    }
    return result;
  }

  /** Waits for nested transactions that fn started but did not await, then closes the frame. */
  async #end(frame: Frame): Promise<void> {
    await frame.children.acquire();
    frame.active = false;
    frame.children.release();
  }
}

/** Runs each piece of after-commit work in turn; one that fails does not stop the others. */
async function runQuietly(work: ReadonlyArray<() => unknown>): Promise<void> {
  for (const run of work) {
    try {
      await run();
    } catch {
      // The work reports its own failures (the event bus logs a failed listener).
    }
  }
}

/** What the holds of a storage that runs one transaction at a time need of it. */
interface TransactionCheck {
  assertInTransaction(operation: string): void;
}

/**
 * `getForUpdate` of a storage that runs one transaction at a time (SQLite,
 * memory): a read, since no other transaction can change the document before
 * this one ends; checked to be inside one, as on every adapter.
 */
export async function readInTurn<T>(storage: TransactionCheck, read: () => Promise<T>): Promise<T> {
  storage.assertInTransaction("getForUpdate");
  return read();
}

/** `lockKey` of a storage that runs one transaction at a time: the transaction already holds everything. */
export async function keyInTurn(storage: TransactionCheck, key: string): Promise<void> {
  storage.assertInTransaction("lockKey");
  assertLockKey(key);
}
