import {
  UniqueConstraintError,
  type Collection,
  type CollectionSpec,
  type IdPatch,
  type Doc,
  type FieldReadAlone,
  type FindOptions,
  type OrderBy,
  type Page,
  type Patch,
  type Storage,
  type Where,
  type WithJsonText,
} from "../../../src/index.ts";
import { AmbientTransactions, keyInTurn, readInTurn } from "../shared/ambient-transactions.ts";
import {
  applyPatch,
  assertId,
  Handles,
  parseSpecs,
  requireDeclared,
  serializeDocument,
  type StoredDoc,
} from "../shared/documents.ts";
import {
  assertFields,
  assertLimit,
  decodeCursor,
  fieldValue,
  pageOf,
  sortKeys,
  type SortKey,
  type SqlValue,
} from "../shared/queries.ts";
import { compareSortValues, compileWhere } from "./sql-semantics.ts";

/**
 * An in-process Storage for tests and demos. It reproduces the SQLite
 * adapter's semantics exactly (the conformance suite holds both to them):
 * values are compared the way `json_extract` + SQLite compare them, documents
 * go through a JSON round trip, and transactions are ambient and serialised
 * (the same AmbientTransactions, over an undo log instead of SQL savepoints).
 */
export function memoryStorage(): Storage {
  return new MemoryStorage();
}

/** The JSON round trip SQLite imposes (Dates become strings, undefined fields vanish), plus a private copy. */
function normalize(doc: unknown): StoredDoc {
  return JSON.parse(serializeDocument(doc).json) as StoredDoc;
}

// ---------------------------------------------------------------------------
// The storage

interface UniqueIndex {
  fields: readonly string[];
  /** Composite key (JSON of the SQL values) to the id holding it. */
  keys: Map<string, string>;
}

interface CollectionState {
  name: string;
  docs: Map<string, StoredDoc>;
  unique: UniqueIndex[];
}

interface UndoEntry {
  collection: CollectionState;
  id: string;
  previous: StoredDoc | undefined;
}

/** Like a SQLite unique index: no key (no constraint) unless every field is present and not null. */
function uniqueKey(doc: StoredDoc, fields: readonly string[]): string | undefined {
  const values: SqlValue[] = [];
  for (const field of fields) {
    const value = fieldValue(doc, field);
    if (value === null) return undefined;
    values.push(value);
  }
  return JSON.stringify(values);
}

class MemoryStorage implements Storage {
  readonly name = "memory";
  readonly #collections = new Map<string, CollectionState>();
  readonly #handles = new Handles((name) => new MemoryCollection<Doc>(this, name));
  readonly #transactions: AmbientTransactions<number>;
  /** Previous versions of everything written since the open transaction (or atomic step) began. */
  #undo: UndoEntry[] | undefined;
  #closed = false;

  constructor() {
    // Savepoints are undo-log marks: a failing nested fn undoes only its own writes.
    this.#transactions = new AmbientTransactions<number>({
      begin: () => {
        this.#assertOpen();
        this.#undo = [];
      },
      commit: () => {
        this.#undo = undefined;
      },
      rollback: () => {
        this.#rollbackTo(0);
        this.#undo = undefined;
      },
      savepoint: () => this.#undo?.length ?? 0,
      release: () => {},
      rollbackTo: (mark) => this.#rollbackTo(mark),
    });
  }

  ensureCollections(specs: readonly CollectionSpec[]): Promise<void> {
    return this.#transactions.outside("ensureCollections", () => {
      this.#assertOpen();
      // Validate and build everything first, so a failure changes nothing.
      const updates: { state: CollectionState; unique: UniqueIndex[] }[] = [];
      for (const { name, indexes } of parseSpecs(specs)) {
        const state = this.#collections.get(name) ?? { name, docs: new Map(), unique: [] };
        const unique: UniqueIndex[] = [];
        for (const index of indexes) {
          if (!index.unique) continue;
          const keys = new Map<string, string>();
          for (const doc of state.docs.values()) {
            const key = uniqueKey(doc, index.fields);
            if (key === undefined) continue;
            if (keys.has(key)) throw new UniqueConstraintError(name, index.fields);
            keys.set(key, doc.id);
          }
          unique.push({ fields: index.fields, keys });
        }
        updates.push({ state, unique });
      }
      for (const { state, unique } of updates) {
        state.unique = unique;
        this.#collections.set(state.name, state);
      }
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
    await this.#transactions.outside("close", () => {
      this.#closed = true;
      this.#collections.clear();
    });
  }

  assertInTransaction(operation: string): void {
    this.#transactions.assertInTransaction(operation);
  }

  /** Runs a synchronous operation at the right moment (see AmbientTransactions.run). */
  run<R>(operation: () => R): Promise<R> {
    return this.#transactions.run(() => {
      this.#assertOpen();
      return operation();
    });
  }

  /** The collection's state; throws, naming it, while it is undeclared. */
  state(name: string): CollectionState {
    return requireDeclared(this.#collections, name);
  }

  /** All of `work`'s writes, or none: the basis of upsertMany and updateWhere. */
  atomic<R>(work: () => R): R {
    const own = this.#undo === undefined;
    const log = (this.#undo ??= []);
    const mark = log.length;
    try {
      return work();
    } catch (error) {
      this.#rollbackTo(mark);
      throw error;
    } finally {
      if (own) this.#undo = undefined;
    }
  }

  /** Writes (next) or deletes (undefined) one document, enforcing unique indexes first. */
  put(state: CollectionState, id: string, next: StoredDoc | undefined): void {
    const previous = state.docs.get(id);
    if (next !== undefined) {
      for (const index of state.unique) {
        const key = uniqueKey(next, index.fields);
        const owner = key === undefined ? undefined : index.keys.get(key);
        if (owner !== undefined && owner !== id) throw new UniqueConstraintError(state.name, index.fields);
      }
    }
    this.#replace(state, id, previous, next);
    this.#undo?.push({ collection: state, id, previous });
  }

  #replace(state: CollectionState, id: string, previous: StoredDoc | undefined, next: StoredDoc | undefined): void {
    for (const index of state.unique) {
      const before = previous === undefined ? undefined : uniqueKey(previous, index.fields);
      if (before !== undefined && index.keys.get(before) === id) index.keys.delete(before);
      const after = next === undefined ? undefined : uniqueKey(next, index.fields);
      if (after !== undefined) index.keys.set(after, id);
    }
    if (next === undefined) state.docs.delete(id);
    else state.docs.set(id, next);
  }

  #rollbackTo(mark: number): void {
    const log = this.#undo;
    if (log === undefined) return;
    // Newest first, so every step restores a state that existed (and was consistent).
    for (let i = log.length - 1; i >= mark; i--) {
      const { collection, id, previous } = log[i];
      this.#replace(collection, id, collection.docs.get(id), previous);
    }
    log.length = mark;
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error("the memory storage is closed");
  }
}

class MemoryCollection<T extends Doc> implements Collection<T> {
  readonly #storage: MemoryStorage;
  readonly #name: string;

  constructor(storage: MemoryStorage, name: string) {
    this.#storage = storage;
    this.#name = name;
  }

  get(id: string): Promise<T | undefined> {
    return this.#run((state) => {
      assertId(id);
      return this.#out(state.docs.get(id));
    });
  }

  getForUpdate(id: string): Promise<T | undefined> {
    return readInTurn(this.#storage, () => this.get(id));
  }

  lockKey(key: string): Promise<void> {
    return keyInTurn(this.#storage, key);
  }

  insert(doc: T): Promise<T> {
    return this.#run((state) => {
      const stored = normalize(doc);
      if (state.docs.has(stored.id)) throw new UniqueConstraintError(state.name, ["id"]);
      this.#storage.put(state, stored.id, stored);
      return this.#copy(stored);
    });
  }

  upsert(doc: T): Promise<T> {
    return this.#run((state) => {
      const stored = normalize(doc);
      this.#storage.put(state, stored.id, stored);
      return this.#copy(stored);
    });
  }

  upsertMany(docs: readonly WithJsonText<T>[]): Promise<void> {
    return this.#run((state) => {
      if (!Array.isArray(docs)) throw new TypeError("upsertMany expects an array");
      this.#storage.atomic(() => {
        for (const doc of docs) {
          const stored = normalize(doc);
          this.#storage.put(state, stored.id, stored);
        }
      });
    });
  }

  update(id: string, patch: Patch<T>, options?: { where?: Where<T> }): Promise<T | undefined> {
    return this.#run((state) => {
      assertId(id);
      const matches = compileWhere(options?.where);
      const current = state.docs.get(id);
      if (current === undefined || !matches(current)) return undefined;
      const next = this.#patched(current, patch);
      this.#storage.put(state, id, next);
      return this.#copy(next);
    });
  }

  updateWhere(where: Where<T>, patch: Patch<T>): Promise<number> {
    return this.#run((state) => {
      const matches = compileWhere(where);
      const targets = [...state.docs.values()].filter(matches);
      this.#storage.atomic(() => {
        for (const doc of targets) this.#storage.put(state, doc.id, this.#patched(doc, patch));
      });
      return targets.length;
    });
  }

  updateEach(updates: readonly IdPatch<T>[]): Promise<number> {
    return this.#run((state) => {
      if (!Array.isArray(updates)) throw new TypeError("updateEach expects an array");
      return this.#storage.atomic(() => {
        let applied = 0;
        for (const { id, patch } of updates) {
          assertId(id);
          const current = state.docs.get(id);
          if (current === undefined) continue;
          this.#storage.put(state, id, this.#patched(current, patch));
          applied++;
        }
        return applied;
      });
    });
  }

  delete(id: string): Promise<boolean> {
    return this.#run((state) => {
      assertId(id);
      if (!state.docs.has(id)) return false;
      this.#storage.put(state, id, undefined);
      return true;
    });
  }

  deleteWhere(where: Where<T>): Promise<number> {
    return this.#run((state) => {
      const matches = compileWhere(where);
      const targets = [...state.docs.values()].filter(matches);
      for (const doc of targets) this.#storage.put(state, doc.id, undefined);
      return targets.length;
    });
  }

  find(options: FindOptions<T> = {}): Promise<Page<T>> {
    return this.#run((state) => {
      assertLimit(options.limit);
      const keys = sortKeys(options.orderBy);
      const rows = this.#select(state, options.where, keys, options.after);
      // One beyond the limit tells pageOf that another page follows.
      const fetched = options.limit === undefined ? rows : rows.slice(0, options.limit + 1);
      return pageOf(fetched.map((row) => this.#copy(row.doc)), options.limit, () => keys);
    });
  }

  /** The named fields only: a caller that reads another fails here, as it might on an adapter that leaves it out. */
  async findFields<K extends FieldReadAlone<T>>(fields: readonly K[], options?: FindOptions<T>): Promise<Page<Pick<T, K | "id">>> {
    assertFields(fields);
    const page = await this.find(options);
    return { ...page, items: page.items.map((doc) => pickFields(doc, fields)) };
  }

  findOne(where: Where<T>, orderBy?: readonly OrderBy<T>[]): Promise<T | undefined> {
    return this.#run((state) => this.#out(this.#select(state, where, sortKeys(orderBy), undefined)[0]?.doc));
  }

  count(where?: Where<T>): Promise<number> {
    return this.#run((state) => {
      const matches = compileWhere(where);
      let count = 0;
      for (const doc of state.docs.values()) if (matches(doc)) count++;
      return count;
    });
  }

  /** Every operation starts here: the collection must be declared by the time it runs. */
  #run<R>(operation: (state: CollectionState) => R): Promise<R> {
    return this.#storage.run(() => operation(this.#storage.state(this.#name)));
  }

  #select(state: CollectionState, where: object | undefined, keys: readonly SortKey[], after: string | undefined) {
    const matches = compileWhere(where);
    const cursor = after === undefined ? undefined : decodeCursor(after, keys);
    const rows: { doc: StoredDoc; values: SqlValue[] }[] = [];
    for (const doc of state.docs.values()) {
      if (!matches(doc)) continue;
      const values = keys.map((key) => fieldValue(doc, key.field));
      if (cursor !== undefined && compareSortValues(keys, values, cursor) <= 0) continue;
      rows.push({ doc, values });
    }
    return rows.sort((a, b) => compareSortValues(keys, a.values, b.values));
  }

  /** normalize() makes the deep copy, so a shallow one is enough to patch. */
  #patched(doc: StoredDoc, patch: Patch<T>): StoredDoc {
    return normalize(applyPatch({ ...doc }, patch, doc.id));
  }

  #copy(doc: StoredDoc): T {
    return structuredClone(doc) as unknown as T;
  }

  #out(doc: StoredDoc | undefined): T | undefined {
    return doc === undefined ? undefined : this.#copy(doc);
  }
}

/** `doc`'s id and named fields (those it has): what this adapter answers `findFields` with. */
function pickFields<T extends Doc>(doc: T, fields: readonly string[]): T {
  const picked: Record<string, unknown> = { id: doc.id };
  for (const field of fields) if (Object.hasOwn(doc, field)) picked[field] = (doc as Record<string, unknown>)[field];
  return picked as T;
}
