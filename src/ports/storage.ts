import { defineToken } from "../kernel/token.ts";

/** A value that survives a JSON round trip. Documents are made of these. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Every stored document is a JSON object with a string `id`, unique in its collection. */
export interface Doc {
  id: string;
}

/** Values a where-clause can compare against. Booleans compare as 1 / 0. */
export type Scalar = string | number | boolean | null;

/** Comparison operators of the where-language. Several in one object are ANDed. */
export interface FieldOperators<V> {
  eq?: V | null;
  ne?: V | null;
  in?: readonly V[];
  gt?: V;
  gte?: V;
  lt?: V;
  lte?: V;
  /** true: the field is present and not null; false: absent or null. */
  exists?: boolean;
}

/** The scalar part of a field type, which is what a where-clause compares. */
export type ScalarOf<V> = Extract<NonNullable<V>, Scalar>;

/** A bare value means equality (`null` matches an absent or null field). */
export type FieldCondition<V> = ScalarOf<V> | null | FieldOperators<ScalarOf<V>>;

/**
 * The where-language: conditions on top-level fields, ANDed together.
 * Only scalar fields can be compared; nested objects are stored but not queried.
 */
export type Where<T> = { [K in keyof T & string]?: FieldCondition<T[K]> };

export interface OrderBy<T> {
  field: keyof T & string;
  direction?: "asc" | "desc";
}

export interface FindOptions<T> {
  where?: Where<T>;
  /** Sort keys, then `id` ascending as the final tie-breaker (always, so paging is stable). */
  orderBy?: readonly OrderBy<T>[];
  limit?: number;
  /** The `nextCursor` of a previous page with the same where and orderBy. */
  after?: string;
}

/** The fields `findFields` may read without the rest of a document: those typed as a string or a number. */
export type FieldReadAlone<T> = { [K in keyof T & string]-?: [Exclude<T[K], undefined>] extends [string | number] ? K : never }[keyof T & string];

export interface Page<T> {
  items: T[];
  /** Present when more items may follow; pass it as `after` to get them. */
  nextCursor?: string;
}

export interface IndexSpec {
  /** Top-level fields, in index order. */
  fields: readonly string[];
  /** Unique among documents where every field is present and not null. */
  unique?: boolean;
  /**
   * Leaves out of the index every document where one of its fields is absent
   * or null: such a document costs no entry to write or move. For fields that
   * most documents leave null (a key most jobs lack, a lease only running jobs
   * hold). Queries answer the same either way; the index serves a query that
   * compares each of its fields with `eq` (not null), `in`, a range or
   * `exists: true`, and not one that asks for null on a field or only sorts by
   * it (that one reads through another index, or the whole collection).
   */
  sparse?: boolean;
}

/** What a plugin declares; adapters create tables and indexes from it. */
export interface CollectionSpec {
  /** `[a-z][a-z0-9_]*`, prefixed by the owning plugin (`subscriptions_subscribers`). */
  name: string;
  indexes?: readonly IndexSpec[];
  /**
   * A hint that documents are often larger than a few hundred bytes (catalog
   * products, webhook deliveries). The SQLite adapter then keeps the collection
   * in a rowid table, where such documents stay inline in their page instead of
   * spilling to overflow pages past about 1 KB (measured three times faster to
   * write), and where inner pages hold keys rather than whole rows (webhook
   * deliveries of about 600 bytes: half the cost to update). Behaviour is the
   * same either way; other adapters may ignore it. Takes effect when the
   * collection is created: an existing table keeps its layout.
   */
  largeDocuments?: boolean;
  /**
   * Top-level fields often read without the rest of their document (`findFields`), each a string or
   * a number where present. An adapter may keep a copy of each where such a read finds it without parsing the
   * document: SQLite keeps each in a column of its own, as it does an indexed field's, filled by every write
   * (the value is stored twice). For a large document of which a frequent reader needs a few fields (a webhook
   * delivery's body, read for each attempt). A field added to an existing collection is copied from every
   * document when it is declared.
   */
  fieldsReadAlone?: readonly string[];
}

/**
 * A top-level field value given as JSON text, for `upsertMany`: the adapter
 * stores the value the text spells, as if it had been given parsed, and reads
 * return that value. For a writer that holds a value's JSON already (a line of
 * an uploaded file): it is not serialised a second time. The writer vouches
 * that `text` is one valid JSON value; adapters need not check it.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

/** A document as `upsertMany` takes it: any top-level field but `id` may be given as {@link JsonText}. */
export type WithJsonText<T extends Doc> = { [K in keyof T]: K extends "id" ? T[K] : T[K] | JsonText };

/** A shallow patch: listed fields are replaced; a field set to `undefined` is removed. */
export type Patch<T> = { [K in keyof T]?: T[K] | undefined };

/** One document's own patch, for `updateEach`. */
export interface IdPatch<T> {
  id: string;
  patch: Patch<T>;
}

export interface Collection<T extends Doc> {
  get(id: string): Promise<T | undefined>;
  /**
   * Reads the document and holds it to the end of the current transaction:
   * until this transaction commits or rolls back, another transaction's
   * `getForUpdate` of the document, and its writes to it, wait; then they see
   * what this one wrote. For code that decides on what it read and writes back
   * (a plain `get` holds nothing where transactions run side by side, so such
   * a write could undo a change another transaction committed in between).
   * PostgreSQL: `SELECT ... FOR UPDATE`. SQLite and memory run one transaction
   * at a time, so there it is a read.
   *
   * Only inside `Storage.transaction`: outside one it rejects, on every
   * adapter (a hold that ends with the call protects nothing). An absent
   * document is not held where transactions run side by side (there is no row
   * to lock): to take turns on something that may have no document yet, use
   * {@link lockKey}.
   */
  getForUpdate(id: string): Promise<T | undefined>;
  /**
   * Holds `key`, in this collection's name space, to the end of the current
   * transaction, whether or not a document has it as id: another transaction's
   * `lockKey` of the same key on the same collection waits until this one
   * commits or rolls back, so what each reads after the call it reads after
   * the other's commit. For work that takes turns per something that may have
   * no document (a company and a phone before their first message), with no
   * row to create, keep or erase. It holds no document: writes and
   * `getForUpdate` do not wait for it.
   *
   * Only inside `Storage.transaction` (it rejects outside one). PostgreSQL: a
   * transaction-level advisory lock on a 64-bit hash of the schema, the
   * collection and the key (two keys whose hashes collide would only take
   * turns needlessly). SQLite and memory run one transaction at a time: there
   * it holds nothing more.
   */
  lockKey(key: string): Promise<void>;
  /** Fails with {@link UniqueConstraintError} when the id or a unique index is taken. */
  insert(doc: T): Promise<T>;
  /** Inserts, or replaces the whole document with the same id. */
  upsert(doc: T): Promise<T>;
  /** Upserts many documents in one atomic step (the bulk path of catalog ingest). Fields may be given as {@link JsonText}. */
  upsertMany(docs: readonly WithJsonText<T>[]): Promise<void>;
  /**
   * Applies a patch to one document, atomically. With `where`, only when the
   * stored document still matches it: the basis of job claims and optimistic
   * updates. Returns the new document, or undefined when absent or not matching.
   */
  update(id: string, patch: Patch<T>, options?: { where?: Where<T> }): Promise<T | undefined>;
  /** Applies a patch to every matching document; returns how many changed. */
  updateWhere(where: Where<T>, patch: Patch<T>): Promise<number>;
  /**
   * Applies to each listed document its own patch, in one atomic step, as `updateWhere({ id }, patch)`
   * of each in list order would (a later patch of an id applies over an earlier one); an id with no
   * document is skipped. For a writer with many rows to change at once, each its own way (the due rows of
   * the webhook retries of one turn): adapters write the patches of one shape with one statement.
   * Returns how many patches applied.
   */
  updateEach(updates: readonly IdPatch<T>[]): Promise<number>;
  delete(id: string): Promise<boolean>;
  /** Deletes every matching document; returns how many. */
  deleteWhere(where: Where<T>): Promise<number>;
  find(options?: FindOptions<T>): Promise<Page<T>>;
  /**
   * `find` for a caller that reads only `fields` of each item: each has at least these and its id, with their
   * stored values; an adapter may leave the others out (the memory adapter does, so that a reader of a field
   * it did not name fails its tests). Each named field holds a string or a number where present. Where each
   * named field is indexed or one of the collection's `fieldsReadAlone`, and each `orderBy` field is named, the
   * SQLite adapter reads them from their columns and parses no document.
   */
  findFields<K extends FieldReadAlone<T>>(fields: readonly K[], options?: FindOptions<T>): Promise<Page<Pick<T, K | "id">>>;
  findOne(where: Where<T>, orderBy?: readonly OrderBy<T>[]): Promise<T | undefined>;
  count(where?: Where<T>): Promise<number>;
}

/**
 * The Storage port: typed document collections with declared indexes, a small
 * where-language, atomic conditional updates and transactions.
 *
 * Transactions are ambient: every call made inside `transaction(fn)`, on any
 * collection handle, joins it (the adapter tracks the async context), and calls
 * from elsewhere wait until it commits or rolls back. A nested `transaction`
 * call joins the outer one.
 */
export interface Storage {
  /** Human name for logs and errors ("sqlite", "memory", ...). */
  readonly name: string;
  /**
   * Whether transactions of one process run side by side (PostgreSQL: each on
   * its own connection, READ COMMITTED) rather than one at a time (SQLite,
   * memory: absent or false). When true, a transaction never sees another's
   * uncommitted writes, a write to a row another open transaction wrote waits
   * for it, and two transactions locking rows in opposite orders may deadlock:
   * one of them then rejects and rolls back whole. When false, a transaction
   * waits for the one open before it, and so do calls made outside any.
   */
  readonly transactionsRunConcurrently?: boolean;
  /** Creates missing collections and indexes; drops indexes no longer declared. Idempotent. */
  ensureCollections(specs: readonly CollectionSpec[]): Promise<void>;
  collection<T extends Doc>(name: string): Collection<T>;
  /** Runs `fn` atomically: everything it wrote is rolled back if it throws. */
  transaction<R>(fn: () => Promise<R>): Promise<R>;
  /**
   * Runs `work` once the caller's transaction has committed (at once outside
   * one), never if it rolls back, nor if the nested transaction that registered
   * it rolls back. The outermost `transaction()` resolves after the work has
   * settled; a failure of the work does not fail it. The kit's event bus runs
   * its ordinary listeners this way. Optional for adapters: without it, those
   * listeners run when the event is emitted, inside the transaction.
   */
  afterCommit?(work: () => unknown): Promise<void>;
  /**
   * Whether the caller runs inside a transaction still open (its async context is that of a
   * `transaction(fn)` that has not ended). For writes that must be atomic together whether or not
   * their caller opened a transaction: inside one they already are, and a nested `transaction` would
   * cost a savepoint. Optional for adapters: without it, such code opens a (nested) transaction.
   */
  inTransaction?(): boolean;
  close(): Promise<void>;
}

/** A write broke the id or a unique index of a collection. */
export class UniqueConstraintError extends Error {
  constructor(
    readonly collection: string,
    /** The fields of the violated key (`["id"]` for the primary key). */
    readonly fields: readonly string[],
  ) {
    super(`unique constraint violated on ${collection}(${fields.join(", ")})`);
    this.name = "UniqueConstraintError";
  }
}

/**
 * A find's `after` is not a cursor this collection gave for the same orderBy
 * (malformed, or from another query): a caller's mistake, such as an edited
 * page link, never a storage failure.
 */
export class InvalidCursorError extends Error {
  constructor(detail = "malformed cursor") {
    super(detail);
    this.name = "InvalidCursorError";
  }
}

export const STORAGE = defineToken<Storage>("Storage", [
  "reachkit/adapters/storage/sqlite (sqliteStorage)",
  "reachkit/adapters/storage/memory (memoryStorage)",
  "reachkit/adapters/storage/postgres (postgresStorage)",
]);
