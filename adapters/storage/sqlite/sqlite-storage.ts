import Database from "better-sqlite3";
import type { Collection, CollectionSpec, Doc, Storage } from "../../../src/index.ts";
import { AmbientTransactions } from "../shared/ambient-transactions.ts";
import { Handles, requireDeclared } from "../shared/documents.ts";
import { BackgroundCheckpoints } from "./checkpointer.ts";
import { applyCollection, createLedger, normalizeSpecs, type DeclaredCollection } from "./schema.ts";
import { SqliteCollection, type CollectionStorage } from "./sqlite-collection.ts";

export interface SqliteStorageOptions {
  /** A database file path, or ":memory:" for a private in-memory database. */
  filename: string;
  /**
   * SQLite's page cache, in KiB (default: better-sqlite3's 16 MiB). Pages
   * beyond it come from the operating system's file cache; a smaller cache
   * keeps a server's memory low.
   */
  cacheKiB?: number;
  /**
   * Copy the WAL into the database file from a worker thread (see
   * checkpointer.ts) rather than inside the commits of this connection.
   * Default true; database files only.
   */
  backgroundCheckpoints?: boolean;
}

function cacheKiB(value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`sqliteStorage: cacheKiB must be a whole number of at least 1, got ${String(value)}`);
  return value;
}

/** Generated SQL varies with where shapes (e.g. `in` list lengths); keep the cache bounded. */
const STATEMENT_CACHE_LIMIT = 500;
export function sqliteStorage(options: SqliteStorageOptions): Storage {
  return new SqliteStorage(options);
}

class SqliteStorage implements Storage, CollectionStorage {
  readonly name = "sqlite";
  readonly #db: Database.Database;
  readonly #statements = new Map<string, Database.Statement>();
  readonly #declared = new Map<string, DeclaredCollection>();
  readonly #handles = new Handles((name) => new SqliteCollection<Doc>(this, name));
  /** A savepoint is marked by its depth: see `savepoint` below. */
  readonly #transactions: AmbientTransactions<number>;
  readonly #atomic: Database.Transaction<(work: () => unknown) => unknown>;
  readonly #checkpoints?: BackgroundCheckpoints;
  #closed = false;
  /** Savepoints open in the current transaction (they nest strictly: AmbientTransactions keeps them LIFO). */
  #savepointDepth = 0;
  /** Whether the open SQLite transaction is a read batch (see `read`) rather than a `transaction()`. */
  #readBatchOpen = false;
  readonly #endReadBatchSoon = () => this.#endReadBatch();

  constructor(options: SqliteStorageOptions) {
    const db = new Database(options.filename);
    this.#db = db;
    const file = options.filename !== ":memory:" && options.filename !== "";
    try {
      if (file) db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      db.pragma("busy_timeout = 5000");
      if (options.cacheKiB !== undefined) db.pragma(`cache_size = -${cacheKiB(options.cacheKiB)}`);
      createLedger(db);
      if (file && options.backgroundCheckpoints !== false) this.#checkpoints = new BackgroundCheckpoints(db, options.filename);
    } catch (error) {
      db.close();
      throw error;
    }
    // better-sqlite3 turns this into a SAVEPOINT when a transaction is already open,
    // so multi-statement operations are atomic both alone and inside transaction().
    this.#atomic = db.transaction((work: () => unknown) => work());
    this.#transactions = new AmbientTransactions<number>({
      begin: () => {
        this.#assertOpen();
        this.#endReadBatch();
        this.#statement("BEGIN IMMEDIATE").run();
        this.#savepointDepth = 0;
      },
      commit: () => {
        if (!db.inTransaction) {
          throw new Error("SQLite rolled the transaction back on its own (I/O, full disk or busy error)");
        }
        this.#statement("COMMIT").run();
      },
      rollback: () => {
        if (db.inTransaction) this.#statement("ROLLBACK").run();
      },
      // Named by depth, so a few statement texts serve every savepoint and each is prepared once: a batch of
      // opt-ins opens two or three per job, and exec compiled each name anew.
      savepoint: () => {
        const depth = this.#savepointDepth + 1;
        this.#statement(`SAVEPOINT rk_sp_${depth}`).run();
        this.#savepointDepth = depth;
        return depth;
      },
      release: (depth) => {
        this.#statement(`RELEASE rk_sp_${depth}`).run();
        this.#savepointDepth = depth - 1;
      },
      rollbackTo: (depth) => {
        this.#statement(`ROLLBACK TO rk_sp_${depth}`).run();
        this.#statement(`RELEASE rk_sp_${depth}`).run();
        this.#savepointDepth = depth - 1;
      },
    });
  }

  ensureCollections(specs: readonly CollectionSpec[]): Promise<void> {
    // Never inside a transaction: its DDL would roll back with it, the declared set would not.
    return this.#transactions.outside("ensureCollections", () => {
      this.#assertOpen();
      const collections = normalizeSpecs(specs);
      this.#endReadBatch();
      this.atomic(() => {
        for (const collection of collections) applyCollection(this.#db, collection);
      });
      for (const collection of collections) this.#declared.set(collection.name, collection);
    });
  }

  collection<T extends Doc>(name: string): Collection<T> {
    return this.#handles.get(name) as unknown as Collection<T>;
  }

  transaction<R>(fn: () => Promise<R>): Promise<R> {
    return this.#transactions.transaction(fn);
  }

  afterCommit(work: () => unknown): Promise<void> {
    return this.#transactions.afterCommit(work);
  }

  inTransaction(): boolean {
    return this.#transactions.inTransaction();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#transactions.outsideAsync("close", async () => {
      if (this.#closed) return;
      await this.#checkpoints?.stop();
      this.#endReadBatch();
      this.#closed = true;
      this.#statements.clear();
      this.#db.close();
    });
  }

  assertInTransaction(operation: string): void {
    this.#transactions.assertInTransaction(operation);
  }

  /** Runs a synchronous operation that may write, at the right moment (see AmbientTransactions.run). */
  run<R>(operation: () => R): Promise<R> {
    return this.#transactions.run(() => {
      this.#assertOpen();
      this.#endReadBatch();
      return operation();
    });
  }

  /**
   * Runs a read-only operation. Outside a transaction, the reads of one
   * event-loop turn share one read transaction (a read batch), committed on
   * the next turn or before anything else runs: SQLite then takes and drops
   * its file locks once per batch instead of once per statement, which was a
   * third of the cost of a request's reads. The batch only ever reads, so it
   * holds no lock another connection waits for (WAL readers never block
   * writers), and what it sees is at most one turn old.
   */
  read<R>(operation: () => R): Promise<R> {
    return this.#transactions.run(() => {
      this.#assertOpen();
      if (!this.#db.inTransaction) {
        this.#statement("BEGIN").run();
        this.#readBatchOpen = true;
        setImmediate(this.#endReadBatchSoon);
      }
      return operation();
    });
  }

  #endReadBatch(): void {
    if (!this.#readBatchOpen) return;
    this.#readBatchOpen = false;
    if (this.#db.inTransaction) this.#statement("COMMIT").run();
  }

  /** Atomic on its own (BEGIN IMMEDIATE, so also against other processes), or a savepoint inside a transaction. */
  atomic<R>(work: () => R): R {
    return this.#atomic.immediate(work) as R;
  }

  /**
   * `work` that reads, then writes with a single statement: atomic on its own. Inside a transaction it
   * needs no savepoint, since a failing statement undoes itself and nothing runs between the two; a
   * savepoint per update was about 3% of the CPU of a batch of opt-ins.
   */
  readThenWrite<R>(work: () => R): R {
    return this.#db.inTransaction ? work() : this.atomic(work);
  }

  /** A read transaction (or a savepoint inside one): every statement in `work` sees the same data. */
  snapshot<R>(work: () => R): R {
    return this.#atomic.deferred(work) as R;
  }

  /** Prepared once per SQL text; read statements return their single column directly. */
  statement(sql: string): Database.Statement<unknown[]> {
    return this.#statement(sql);
  }

  #statement(sql: string): Database.Statement<unknown[]> {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql);
      // One column (a document, a count) comes as its value; several (findFields' columns) as an array of them.
      if (statement.reader) {
        if (statement.columns().length === 1) statement.pluck();
        else statement.raw();
      }
      if (this.#statements.size >= STATEMENT_CACHE_LIMIT) {
        this.#statements.delete(this.#statements.keys().next().value as string);
      }
      this.#statements.set(sql, statement);
    }
    return statement as Database.Statement<unknown[]>;
  }

  /** Counts the documents' bytes written (see BackgroundCheckpoints). */
  noteWritten(bytes: number): void {
    this.#checkpoints?.noteWritten(bytes);
  }

  /** Throws, naming it, while the collection is undeclared. */
  declared(name: string): DeclaredCollection {
    return requireDeclared(this.#declared, name);
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error("the sqlite storage is closed");
  }
}
