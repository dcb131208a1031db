// A collection of the SQLite storage: its documents' reads and writes, in the storage's transactions.
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type Database from "better-sqlite3";
import type { Collection, Doc, FieldReadAlone, FindOptions, IdPatch, OrderBy, Page, Patch, Where, WithJsonText } from "../../../src/index.ts";
import { keyInTurn, readInTurn } from "../shared/ambient-transactions.ts";
import { applyPatch, assertId, serializeDocument, type StoredDoc } from "../shared/documents.ts";
import { assertFields, assertLimit, pageOf, sortKeys } from "../shared/queries.ts";
import { changedColumns, pushColumnParams } from "./columns.ts";
import { patchRowsSql, patchSql, rowsPerStatement, type PatchSql } from "./patch-sql.ts";
import { toUniqueError, type DeclaredCollection } from "./schema.ts";
import { compileWhere, findQueries, limitSql, type SqlFragment } from "./where-sql.ts";

/** Rows per multi-row INSERT in upsertMany: fewer statement executions, well under SQLite's 32766 parameters. */
const UPSERT_ROWS_PER_STATEMENT = 200;
/**
 * Rows per statement of upsertMany, largest first: full statements, then what
 * is left in halving sizes. Few statement runs (the rest of a catalog batch's
 * hint rows had been written one row per statement, up to 199 of them) and a
 * few SQL texts per collection.
 */
const UPSERT_STATEMENT_ROWS = [UPSERT_ROWS_PER_STATEMENT, 128, 64, 32, 16, 8, 4, 2, 1];
/** upsertMany lets the event loop breathe between chunks of this many documents. */
const UPSERT_DOCS_PER_CHUNK = 5000;

/**
 * What a collection asks of its storage (sqlite-storage.ts): its statements, its transactions and the
 * collections' declarations. An interface rather than the storage's class: the class stays out of the
 * shipped declarations, which would otherwise need better-sqlite3's types in every host that type-checks.
 */
export interface CollectionStorage {
  statement(sql: string): Database.Statement<unknown[]>;
  declared(name: string): DeclaredCollection;
  noteWritten(bytes: number): void;
  transaction<R>(fn: () => Promise<R>): Promise<R>;
  inTransaction(): boolean;
  assertInTransaction(operation: string): void;
  run<R>(operation: () => R): Promise<R>;
  read<R>(operation: () => R): Promise<R>;
  atomic<R>(work: () => R): R;
  readThenWrite<R>(work: () => R): R;
  snapshot<R>(work: () => R): R;
}

export class SqliteCollection<T extends Doc> implements Collection<T> {
  readonly #storage: CollectionStorage;
  readonly #name: string;
  readonly #table: string;
  // Built once: the statement cache is keyed by SQL text, and a string made per call must be hashed per call.
  // The statements that write documents depend on the declaration (its columns): see WriteSql.
  readonly #sql: { get: string; deleteById: string };

  constructor(storage: CollectionStorage, name: string) {
    this.#storage = storage;
    this.#name = name;
    this.#table = `"${name}"`;
    this.#sql = {
      get: `SELECT doc FROM ${this.#table} WHERE id = ?`,
      deleteById: `DELETE FROM ${this.#table} WHERE id = ?`,
    };
  }

  get(id: string): Promise<T | undefined> {
    return this.#read(() => {
      assertId(id);
      const json = this.#storage.statement(this.#sql.get).get(id);
      return json === undefined ? undefined : (JSON.parse(json as string) as T);
    });
  }

  getForUpdate(id: string): Promise<T | undefined> {
    return readInTurn(this.#storage, () => this.get(id));
  }

  lockKey(key: string): Promise<void> {
    return keyInTurn(this.#storage, key);
  }

  insert(doc: T): Promise<T> {
    return this.#writeRow(doc, (writes) => writes.insert);
  }

  upsert(doc: T): Promise<T> {
    return this.#writeRow(doc, (writes) => writes.upsert(1));
  }

  /** Writes one document with `sql` (WriteSql's insert or upsert); returns it as stored. */
  #writeRow(doc: T, sql: (writes: DeclaredCollection["writes"]) => string): Promise<T> {
    return this.#run((collection) => {
      const params: unknown[] = [];
      const bytes = pushRowParams(params, doc, collection);
      this.#write(() => this.#storage.statement(sql(collection.writes)).run(...params));
      this.#storage.noteWritten(bytes);
      return JSON.parse(params[1] as string) as T;
    });
  }

  upsertMany(docs: readonly WithJsonText<T>[]): Promise<void> {
    if (!Array.isArray(docs)) return Promise.reject(new TypeError("upsertMany expects an array"));
    if (docs.length <= UPSERT_DOCS_PER_CHUNK) {
      return this.#run((collection) => this.#storage.atomic(() => this.#upsertChunk(collection, docs, 0, docs.length)));
    }
    // One transaction for atomicity, yielding between chunks so a big ingest
    // does not freeze the process (other storage callers still wait for it).
    return this.#storage.transaction(async () => {
      for (let start = 0; start < docs.length; start += UPSERT_DOCS_PER_CHUNK) {
        const end = Math.min(start + UPSERT_DOCS_PER_CHUNK, docs.length);
        await this.#run((collection) => this.#upsertChunk(collection, docs, start, end));
        await yieldToEventLoop();
      }
    });
  }

  #upsertChunk(collection: DeclaredCollection, docs: readonly WithJsonText<T>[], start: number, end: number): void {
    const params: unknown[] = [];
    let bytes = 0;
    const flush = (rows: number) => {
      this.#write(() => this.#storage.statement(collection.writes.upsert(rows)).run(...params));
      params.length = 0;
    };
    let i = start;
    for (const rows of UPSERT_STATEMENT_ROWS) {
      while (i + rows <= end) {
        for (const stop = i + rows; i < stop; i++) bytes += pushRowParams(params, docs[i], collection);
        flush(rows);
      }
    }
    this.#storage.noteWritten(bytes);
  }

  update(id: string, patch: Patch<T>, options?: { where?: Where<T> }): Promise<T | undefined> {
    return this.#run((collection) => {
      assertId(id);
      const where = compileWhere(collection, options?.where);
      const update = patchSql(collection, patch);
      if (update !== undefined) {
        // One statement that patches the row in place and answers it: no read, parse and rewrite of the document in JS.
        const sql = `UPDATE ${this.#table} SET ${update.sets} WHERE id = ? AND ${where.sql} RETURNING doc`;
        const json = this.#write(() => this.#storage.statement(sql).get(...update.params, id, ...where.params)) as string | undefined;
        if (json === undefined) return undefined;
        this.#storage.noteWritten(update.bytes);
        return JSON.parse(json) as T;
      }
      // A patch naming the id: checked against the document's in JS.
      return this.#storage.readThenWrite(() => {
        const json = this.#storage
          .statement(`SELECT doc FROM ${this.#table} WHERE id = ? AND ${where.sql}`)
          .get(id, ...where.params);
        if (json === undefined) return undefined;
        const next = this.#rewrite(collection, JSON.parse(json as string) as StoredDoc, patch);
        return JSON.parse(next) as T;
      });
    });
  }

  updateWhere(where: Where<T>, patch: Patch<T>): Promise<number> {
    return this.#run((collection) => this.#patchWhere(collection, where, patch));
  }

  /** updateWhere inside the storage's turn: how many rows the patch changed. */
  #patchWhere(collection: DeclaredCollection, where: Where<T>, patch: Patch<T>): number {
    const condition = compileWhere(collection, where);
    const update = patchSql(collection, patch);
    if (update !== undefined) {
      // One statement, atomic on its own.
      const sql = `UPDATE ${this.#table} SET ${update.sets} WHERE ${condition.sql}`;
      const { changes } = this.#write(() => this.#storage.statement(sql).run(...update.params, ...condition.params));
      this.#storage.noteWritten(changes * update.bytes);
      return changes;
    }
    return this.#storage.atomic(() => {
      const rows = this.#storage
        .statement(`SELECT doc FROM ${this.#table} WHERE ${condition.sql}`)
        .all(...condition.params) as string[];
      for (const json of rows) this.#rewrite(collection, JSON.parse(json) as StoredDoc, patch);
      return rows.length;
    });
  }

  updateEach(updates: readonly IdPatch<T>[]): Promise<number> {
    return this.#run((collection) => {
      const statements = this.#patchStatements(collection, updates);
      if (statements === undefined) {
        const patchEach = () => updates.reduce((applied, { id, patch }) => applied + this.#patchWhere(collection, { id } as Where<T>, patch), 0);
        return updates.length === 1 ? patchEach() : this.#storage.atomic(patchEach);
      }
      // One statement is atomic on its own: a savepoint inside the caller's transaction would cost as much again.
      const write = () => statements.reduce((applied, statement) => applied + this.#patchRows(statement), 0);
      return statements.length === 1 ? write() : this.#storage.atomic(write);
    });
  }

  /**
   * updateEach's statements: one per patch shape and up to PATCH_ROWS_PER_STATEMENT rows, an UPDATE ... FROM
   * (VALUES ...) of each row's id and parameters (PatchRowsSql). Undefined when a patch names `id` or an id
   * is listed twice: those are written one row at a time, in list order.
   */
  #patchStatements(collection: DeclaredCollection, updates: readonly IdPatch<T>[]): PatchStatement[] | undefined {
    if (!Array.isArray(updates)) throw new TypeError("updateEach expects an array");
    const byShape = new Map<string, Array<{ id: string; update: PatchSql }>>();
    const ids = new Set<string>();
    for (const { id, patch } of updates) {
      assertId(id);
      const update = patchSql(collection, patch);
      if (update === undefined || ids.has(id)) return undefined;
      ids.add(id);
      const rows = byShape.get(update.setsFromValues);
      if (rows) rows.push({ id, update });
      else byShape.set(update.setsFromValues, [{ id, update }]);
    }
    const statements: PatchStatement[] = [];
    for (const rows of byShape.values()) {
      const perStatement = rowsPerStatement(1 + rows[0]!.update.params.length);
      for (let start = 0; start < rows.length; start += perStatement) statements.push(patchRowsSql(this.#table, rows.slice(start, start + perStatement)));
    }
    return statements;
  }

  /** One of updateEach's statements, run here: how many rows it changed. */
  #patchRows({ sql, params, bytes }: PatchStatement): number {
    const { changes } = this.#write(() => this.#storage.statement(sql).run(...params));
    this.#storage.noteWritten(bytes);
    return changes;
  }

  /** Writes a document back patched, with the columns the patch changed; returns the stored JSON. */
  #rewrite(collection: DeclaredCollection, doc: StoredDoc, patch: Patch<T>): string {
    const before: unknown[] = [];
    pushColumnParams(before, doc, collection.columns);
    applyPatch(doc, patch, doc.id);
    const { json } = serializeDocument(doc);
    const after: unknown[] = [];
    pushColumnParams(after, doc, collection.columns);
    const changed = changedColumns(before, after);
    const params: unknown[] = [json];
    for (const column of changed) params.push(after[2 * column], after[2 * column + 1]);
    params.push(doc.id);
    this.#write(() => this.#storage.statement(collection.writes.updateById(changed)).run(...params));
    this.#storage.noteWritten(json.length);
    return json;
  }

  delete(id: string): Promise<boolean> {
    return this.#run(() => {
      assertId(id);
      return this.#storage.statement(this.#sql.deleteById).run(id).changes > 0;
    });
  }

  deleteWhere(where: Where<T>): Promise<number> {
    return this.#run((collection) => {
      const condition = compileWhere(collection, where);
      return this.#storage.statement(`DELETE FROM ${this.#table} WHERE ${condition.sql}`).run(...condition.params)
        .changes;
    });
  }

  find(options: FindOptions<T> = {}): Promise<Page<T>> {
    return this.#read((collection) => this.#documents(collection, options));
  }

  /**
   * The named fields from their columns when each has one (indexed, or read alone) and each sort field is named:
   * no document parsed. Whole documents otherwise.
   */
  findFields<K extends FieldReadAlone<T>>(fields: readonly K[], options: FindOptions<T> = {}): Promise<Page<Pick<T, K | "id">>> {
    return this.#read((collection) => {
      assertFields(fields);
      const named: string[] = ["id", ...fields.filter((field) => field !== "id")];
      const fromColumns = named.every((field) => field === "id" || collection.columnOf.has(field)) && (options.orderBy ?? []).every((key) => named.includes(key.field));
      if (!fromColumns) return this.#documents(collection, options);
      const selected = named.map((field) => (field === "id" ? "id" : collection.columnOf.get(field)!.sql)).join(", ");
      // One column comes as its value (the statement plucks it), several as an array.
      const items = this.#found(collection, options, selected).map((row) => itemOf(named, named.length === 1 ? [row] : (row as unknown[])));
      // A string with a lone surrogate half is no UTF-8: its column reads back changed, its document as it was.
      if (items.includes(undefined)) return this.#documents(collection, options);
      return pageOf(items as Array<Pick<T, K | "id">>, options.limit, () => sortKeys(options.orderBy));
    });
  }

  #documents(collection: DeclaredCollection, options: FindOptions<T>): Page<T> {
    const items = this.#found(collection, options, "doc").map((json) => JSON.parse(json as string) as T);
    return pageOf(items, options.limit, () => sortKeys(options.orderBy));
  }

  /** The rows of `find`, their `selected` columns: one beyond the limit, which tells pageOf that another page follows. */
  #found(collection: DeclaredCollection, options: FindOptions<T>, selected: string): unknown[] {
    assertLimit(options.limit);
    const fetch = options.limit === undefined ? undefined : options.limit + 1;
    const queries = findQueries(collection, options, fetch, selected);
    // Several segment queries must read one snapshot, or another process could write in between.
    return queries.length === 1 ? this.#rows(queries, fetch) : this.#storage.snapshot(() => this.#rows(queries, fetch));
  }

  /** The rows of find's queries, run in order until `fetch` are found. */
  #rows(queries: readonly SqlFragment[], fetch: number | undefined): unknown[] {
    if (queries.length === 1) return this.#storage.statement(queries[0]!.sql).all(...queries[0]!.params);
    const rows: unknown[] = [];
    for (const query of queries) {
      // Later segments only need what is still missing; their LIMIT literal shrinks accordingly.
      const sql = fetch === undefined || rows.length === 0 ? query.sql : query.sql.replace(/ LIMIT \d+$/, limitSql(fetch - rows.length));
      // A loop, not push(...rows): spreading a few hundred thousand rows overflows the call stack.
      for (const row of this.#storage.statement(sql).all(...query.params)) rows.push(row);
      if (fetch !== undefined && rows.length >= fetch) break;
    }
    return rows;
  }

  findOne(where: Where<T>, orderBy?: readonly OrderBy<T>[]): Promise<T | undefined> {
    return this.#read((collection) => {
      const [query] = findQueries(collection, { where, orderBy }, 1);
      const json = this.#storage.statement(query.sql).get(...query.params);
      return json === undefined ? undefined : (JSON.parse(json as string) as T);
    });
  }

  count(where?: Where<T>): Promise<number> {
    return this.#read((collection) => {
      const condition = compileWhere(collection, where);
      return this.#storage.statement(`SELECT count(*) FROM ${this.#table} WHERE ${condition.sql}`).get(
        ...condition.params,
      ) as number;
    });
  }

  /** Every operation that may write starts here: the collection must be declared by the time it runs. */
  #run<R>(operation: (collection: DeclaredCollection) => R): Promise<R> {
    return this.#storage.run(() => operation(this.#storage.declared(this.#name)));
  }

  /** `#run` for an operation that only reads (it may join the turn's read batch). */
  #read<R>(operation: (collection: DeclaredCollection) => R): Promise<R> {
    return this.#storage.read(() => operation(this.#storage.declared(this.#name)));
  }

  #write<R>(write: () => R): R {
    try {
      return write();
    } catch (error) {
      throw toUniqueError(error, this.#storage.declared(this.#name)) ?? error;
    }
  }
}

/** A statement of updateEach, and what it counts towards the checkpoints (PatchSql.bytes). */
interface PatchStatement {
  sql: string;
  params: unknown[];
  bytes: number;
}

/** Pushes a row's parameters for WriteSql's insert and upsert (id, doc, the columns'); returns the length of its document's JSON. */
function pushRowParams(params: unknown[], doc: unknown, collection: DeclaredCollection): number {
  // Validates the document first: the columns read its fields.
  const { id, json } = serializeDocument(doc);
  params.push(id, json);
  pushColumnParams(params, doc as StoredDoc, collection.columns);
  return json.length;
}

/**
 * An item of `findFields` from its row's columns (`fields`' values in order), a NULL column an absent field; undefined
 * when a string holds U+FFFD, which a string with a lone surrogate half reads back as (the document holds it as it was).
 */
function itemOf(fields: readonly string[], row: readonly unknown[]): Record<string, unknown> | undefined {
  const item: Record<string, unknown> = {};
  for (let index = 0; index < fields.length; index++) {
    const value = row[index];
    if (typeof value === "string" && value.includes("\uFFFD")) return undefined;
    if (value !== null) item[fields[index]!] = value;
  }
  return item;
}
