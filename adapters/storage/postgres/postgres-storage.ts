import { createRequire } from "node:module";
import type pg from "pg";
import type { Collection, CollectionSpec, Doc, Storage } from "../../../src/index.ts";
import { AmbientTransactions, Mutex } from "../shared/ambient-transactions.ts";
import { Handles, requireDeclared } from "../shared/documents.ts";
import { PostgresCollection } from "./postgres-collection.ts";
import { applyCollections, normalizeSpecs, toUniqueError, type DeclaredCollection } from "./schema.ts";
import type { PgParam } from "./where-sql.ts";

export interface PostgresStorageOptions {
  /** A connection URL, `postgres://user:password@host:port/database`. */
  url: string;
  /**
   * Connections kept by this process (default 10). Each open transaction holds
   * one until it ends; reads and writes outside transactions share the rest.
   * More transactions than connections wait for one.
   */
  poolSize?: number;
  /**
   * The PostgreSQL schema holding reachkit's tables (default: the connection's
   * own, normally `public`), created when missing. Several installations, or
   * tests, can then share one database.
   */
  schema?: string;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]*$/;

export function postgresStorage(options: PostgresStorageOptions): Storage {
  return new PostgresStorage(options);
}

/** One open transaction: its pooled connection, and the lock that runs its statements one at a time. */
interface TransactionConnection {
  client: pg.PoolClient;
  statements: Mutex;
  /** Set by COMMIT or ROLLBACK: a failed COMMIT is followed by a ROLLBACK, which must then do nothing. */
  ended: boolean;
}

/**
 * The Storage port on PostgreSQL: one table per collection (`id text`, `doc
 * jsonb`), one expression index per declared index over the sortable keys of
 * where-sql.ts, and the same ledger table as the SQLite adapter.
 *
 * Transactions are ambient as the port requires: inside `transaction(fn)`
 * every call runs on the transaction's own pooled connection, one statement at
 * a time. Transactions run side by side, within this process as across
 * processes (`transactionsRunConcurrently`), bounded by the pool, under
 * PostgreSQL's READ COMMITTED isolation: a transaction never sees another's
 * uncommitted writes; every operation is one statement, so a conditional
 * update (a job claim) is atomic against other transactions (the row is locked
 * and the condition re-checked); a write to a row another open transaction
 * wrote waits for that one to end.
 *
 * Two transactions that lock the same rows in opposite orders deadlock:
 * PostgreSQL aborts one of them (SQLSTATE 40P01) after `deadlock_timeout`.
 * The adapter does not retry it: it cannot know whether the transaction's fn
 * is safe to run twice (fn may have done more than write to this storage), so
 * that transaction rolls back whole and its `transaction()` rejects with
 * PostgreSQL's error (its `code` is "40P01"); the other one commits.
 *
 * A read by `get` or `find` does not lock: code that reads a document and
 * writes it back from what it read would undo a change another transaction
 * committed in between. Such code reads it with `getForUpdate` (`SELECT ...
 * FOR UPDATE`, held to the commit), takes turns on a key with `lockKey` (a
 * transaction-level advisory lock), or fences its write with a conditional
 * update (docs/writing-a-plugin.md, the service). Measured with events posted over
 * HTTP (bench/events.ts, docs/events-and-profiles.md, run 9, loads 9 to 23):
 * against one transaction at a time, the same CPU per event, twice the ratio
 * to the bare handler (0.11 against 0.05) and a p99 of 412 ms against 1,009.
 */
export class PostgresStorage implements Storage {
  readonly name = "postgres";
  readonly transactionsRunConcurrently = true;
  readonly #pool: pg.Pool;
  readonly #declared = new Map<string, DeclaredCollection>();
  readonly #handles = new Handles((name) => new PostgresCollection<Doc>(this, name));
  readonly #transactions: AmbientTransactions<string, TransactionConnection>;
  #savepoints = 0;
  #closed = false;
  /** close's work, asked once: a second close waits for the first. */
  #closeDone: Promise<void> | undefined;
  /** Set once close began: calls from outside a transaction are refused from then on. */
  #closing = false;
  /** Calls made outside a transaction (root transactions too) not settled yet: close waits for them before it ends the pool. */
  readonly #callsOutside = new Set<Promise<unknown>>();

  readonly #schema: string | undefined;

  constructor(options: PostgresStorageOptions) {
    if (options.schema !== undefined && !SCHEMA_NAME.test(options.schema)) {
      throw new Error(`invalid schema name ${JSON.stringify(options.schema)}: expected ${SCHEMA_NAME}`);
    }
    this.#schema = options.schema;
    // Loaded here, not at import: a server on SQLite imports this adapter too, and pg would cost it memory (about 6 MB).
    const { Pool } = createRequire(import.meta.url)("pg") as typeof pg;
    this.#pool = new Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      application_name: "reachkit",
      ...(options.schema === undefined ? {} : { options: `-c search_path=${options.schema}` }),
    });
    // An idle connection that the server drops must not crash the process; the pool replaces it.
    this.#pool.on("error", () => undefined);
    this.#transactions = new AmbientTransactions<string, TransactionConnection>(
      {
        begin: async () => {
          this.#assertOpen();
          const client = await this.#pool.connect();
          try {
            await client.query("BEGIN");
          } catch (error) {
            client.release(true);
            throw error;
          }
          return { client, statements: new Mutex(), ended: false };
        },
        commit: (connection) => this.#end(connection, "COMMIT"),
        rollback: (connection) => this.#end(connection, "ROLLBACK"),
        savepoint: async (connection) => {
          const name = `rk_sp_${++this.#savepoints}`;
          await this.#onConnection(connection, (client) => client.query(`SAVEPOINT ${name}`));
          return name;
        },
        release: async (name, connection) => {
          await this.#onConnection(connection, (client) => client.query(`RELEASE SAVEPOINT ${name}`));
        },
        rollbackTo: async (name, connection) => {
          await this.#onConnection(connection, (client) => client.query(`ROLLBACK TO SAVEPOINT ${name}; RELEASE SAVEPOINT ${name}`));
        },
      },
      { concurrent: true },
    );
  }

  ensureCollections(specs: readonly CollectionSpec[]): Promise<void> {
    // Never inside a transaction: its DDL would roll back with it, the declared set would not.
    return this.#transactions.outsideAsync("ensureCollections", async () => {
      this.#assertOpen();
      const collections = normalizeSpecs(specs);
      const client = await this.#pool.connect();
      try {
        await applyCollections(client, collections, this.#schema);
      } finally {
        client.release();
      }
      for (const collection of collections) this.#declared.set(collection.name, collection);
    });
  }

  collection<T extends Doc>(name: string): Collection<T> {
    return this.#handles.get(name) as unknown as Collection<T>;
  }

  transaction<R>(fn: () => Promise<R>): Promise<R> {
    if (this.#transactions.inTransaction()) return this.#transactions.transaction(fn);
    return this.#outside(() => this.#transactions.transaction(fn));
  }

  afterCommit(work: () => unknown): Promise<void> {
    return this.#transactions.afterCommit(work);
  }

  inTransaction(): boolean {
    return this.#transactions.inTransaction();
  }

  close(): Promise<void> {
    if (this.#transactions.inTransaction()) return Promise.reject(new Error("close cannot run inside a transaction"));
    return (this.#closeDone ??= this.#transactions.outsideAsync("close", async () => {
      // New calls from outside a transaction are refused; those under way (a call still waiting for a connection
      // when the pool ends would never settle) and the transactions open go on to their end.
      this.#closing = true;
      await Promise.allSettled(this.#callsOutside);
      this.#closed = true;
      await this.#pool.end();
    }));
  }

  assertInTransaction(operation: string): void {
    this.#transactions.assertInTransaction(operation);
  }

  /** Every collection operation starts here: at the right moment (see AmbientTransactions.runAsync), declared. */
  run<R>(collection: string, operation: (declared: DeclaredCollection) => Promise<R>): Promise<R> {
    const call = () =>
      this.#transactions.runAsync(() => {
        this.#assertOpen();
        return operation(requireDeclared(this.#declared, collection));
      });
    return this.#transactions.inTransaction() ? call() : this.#outside(call);
  }

  /** A call made outside a transaction (a root transaction, or an operation alone): refused once close began, else waited for by close. */
  #outside<R>(start: () => Promise<R>): Promise<R> {
    if (this.#closing) return Promise.reject(new Error("the postgres storage is closed"));
    const call = start();
    this.#callsOutside.add(call);
    const settled = () => this.#callsOutside.delete(call);
    call.then(settled, settled);
    return call;
  }

  /** One read statement, in the caller's transaction or alone. */
  async query<Row extends pg.QueryResultRow>(sql: string, params: readonly PgParam[]): Promise<pg.QueryResult<Row>> {
    if (!this.#transactions.inTransaction()) return this.#pool.query<Row>(sql, params as PgParam[]);
    return this.#inTransaction((client) => client.query<Row>(sql, params as PgParam[]));
  }

  /**
   * One write statement. Inside a transaction, one that `mayViolate` a unique
   * key runs in a savepoint: in PostgreSQL a failed statement aborts the whole
   * transaction, while the port (like SQLite) lets the caller catch a
   * UniqueConstraintError and carry on. The others (a job claim, a delete)
   * skip the savepoint's two extra round trips.
   */
  async write<Row extends pg.QueryResultRow>(
    collection: DeclaredCollection,
    sql: string,
    params: readonly PgParam[],
    mayViolate = true,
  ): Promise<pg.QueryResult<Row>> {
    try {
      if (!this.#transactions.inTransaction()) return await this.#pool.query<Row>(sql, params as PgParam[]);
      if (!mayViolate) return await this.#inTransaction((client) => client.query<Row>(sql, params as PgParam[]));
      return await this.#inTransaction(async (client) => {
        await client.query("SAVEPOINT rk_write");
        try {
          const result = await client.query<Row>(sql, params as PgParam[]);
          await client.query("RELEASE SAVEPOINT rk_write");
          return result;
        } catch (error) {
          await client.query("ROLLBACK TO SAVEPOINT rk_write; RELEASE SAVEPOINT rk_write");
          throw error;
        }
      });
    } catch (error) {
      throw toUniqueError(error, collection) ?? error;
    }
  }

  /**
   * One INSERT of a row. Inside a transaction it is first tried as `unlessTaken` (the same INSERT, ending
   * `ON CONFLICT DO NOTHING`): a row that would take a unique key is then not inserted and the transaction goes
   * on, with no savepoint around it (two round trips fewer than `write`'s, each an event's ingestion's among
   * them). Only a row so refused is inserted again as `sql` through `write`, in its savepoint, for PostgreSQL's
   * own error (the key taken, as UniqueConstraintError).
   */
  async insert(collection: DeclaredCollection, insert: { sql: string; unlessTaken: string }, params: readonly PgParam[]): Promise<void> {
    if (!this.#transactions.inTransaction()) {
      await this.write(collection, insert.sql, params);
      return;
    }
    const inserted = await this.#inTransaction((client) => client.query(insert.unlessTaken, params as PgParam[]));
    if (inserted.rowCount === 0) await this.write(collection, insert.sql, params);
  }

  /** On the caller's transaction's connection (see #onConnection). */
  #inTransaction<R>(work: (client: pg.PoolClient) => Promise<R>): Promise<R> {
    const connection = this.#transactions.connection();
    if (connection === undefined) return Promise.reject(new Error("no open transaction"));
    return this.#onConnection(connection, work);
  }

  /** Statements of one transaction run one after another, so a savepoint never spans another statement of it. */
  async #onConnection<R>(connection: TransactionConnection, work: (client: pg.PoolClient) => Promise<R>): Promise<R> {
    await connection.statements.acquire();
    try {
      return await work(connection.client);
    } finally {
      connection.statements.release();
    }
  }

  /** Waits for the transaction's statements still running, ends it and returns its connection to the pool. */
  async #end(connection: TransactionConnection, statement: "COMMIT" | "ROLLBACK"): Promise<void> {
    if (connection.ended) return;
    connection.ended = true;
    await connection.statements.acquire();
    let broken = false;
    try {
      await connection.client.query(statement);
    } catch (error) {
      broken = true;
      throw error;
    } finally {
      connection.client.release(broken);
      connection.statements.release();
    }
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error("the postgres storage is closed");
  }
}
