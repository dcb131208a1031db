import type { Collection, Doc, FieldReadAlone, FindOptions, IdPatch, OrderBy, Page, Patch, Where, WithJsonText } from "../../../src/index.ts";
import { assertId, assertLockKey, isPlainObject, serializeDocument } from "../shared/documents.ts";
import { assertFields, assertLimit, pageOf, sortKeys } from "../shared/queries.ts";
import type { PostgresStorage } from "./postgres-storage.ts";
import type { DeclaredCollection } from "./schema.ts";
import { findQuery, Params, whereSql } from "./where-sql.ts";

/** Rows per multi-row upsert statement (two array parameters, so no parameter limit applies). */
const UPSERT_ROWS_PER_STATEMENT = 1000;

/** Schema and collection names hold no "." or ":", so the text is one key's alone. */
const LOCK_KEY_SQL = "SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || '.' || $1, 0))";

interface DocRow<T> {
  doc: T;
}

/**
 * A shallow patch as SQL: `(doc - removed) || set`. Applied by the database in
 * the UPDATE itself, so a conditional update is one atomic statement.
 */
function patchParts(patch: unknown, id: string): { removed: string[]; set: string; fields: string[] } {
  if (!isPlainObject(patch)) throw new TypeError("a patch must be an object");
  const removed: string[] = [];
  // No prototype: a "__proto__" field is then a plain property, as in a stored document.
  const set: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const [key, value] of Object.entries(patch)) {
    if (key === "id") {
      if (value !== id) throw new Error("a patch cannot change a document's id");
    } else if (value === undefined) {
      removed.push(key);
    } else {
      set[key] = value;
    }
  }
  return { removed, set: JSON.stringify(set), fields: Object.keys(set) };
}

/** An upsert (ON CONFLICT on the id) can break a unique key only where the collection has a unique index. */
function hasUniqueIndex(declared: DeclaredCollection): boolean {
  return declared.indexes.some((index) => index.unique);
}

/** Only a patch that sets a field of a unique index can break one (removing a field never does). */
function touchesUniqueIndex(declared: DeclaredCollection, fields: readonly string[]): boolean {
  return declared.indexes.some((index) => index.unique && index.fields.some((field) => fields.includes(field)));
}

export class PostgresCollection<T extends Doc> implements Collection<T> {
  readonly #storage: PostgresStorage;
  readonly #name: string;
  readonly #sql: { get: string; getForUpdate: string; insert: string; insertUnlessTaken: string; upsert: string; upsertMany: string; updateEach: string; deleteById: string };

  constructor(storage: PostgresStorage, name: string) {
    this.#storage = storage;
    this.#name = name;
    const table = `"${name}"`;
    this.#sql = {
      get: `SELECT doc FROM ${table} WHERE id = $1`,
      getForUpdate: `SELECT doc FROM ${table} WHERE id = $1 FOR UPDATE`,
      insert: `INSERT INTO ${table} (id, doc) VALUES ($1, $2::jsonb)`,
      insertUnlessTaken: `INSERT INTO ${table} (id, doc) VALUES ($1, $2::jsonb) ON CONFLICT DO NOTHING`,
      upsert: `INSERT INTO ${table} (id, doc) VALUES ($1, $2::jsonb) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc`,
      upsertMany: `INSERT INTO ${table} (id, doc) SELECT * FROM unnest($1::text[], $2::jsonb[])
                   ON CONFLICT (id) DO UPDATE SET doc = excluded.doc`,
      // Each row's patch as update's: (doc - removed) || set, its removed fields a JSON array.
      updateEach: `UPDATE ${table} AS t SET doc = (t.doc - ARRAY(SELECT jsonb_array_elements_text(v.removed))) || v.set
                   FROM unnest($1::text[], $2::jsonb[], $3::jsonb[]) AS v(id, removed, set) WHERE t.id = v.id`,
      deleteById: `DELETE FROM ${table} WHERE id = $1`,
    };
  }

  get(id: string): Promise<T | undefined> {
    return this.#storage.run(this.#name, async () => {
      assertId(id);
      const result = await this.#storage.query<DocRow<T>>(this.#sql.get, [id]);
      return result.rows[0]?.doc;
    });
  }

  /** The row locked to the commit; one that another transaction holds or wrote is waited for, then read as committed. */
  getForUpdate(id: string): Promise<T | undefined> {
    return this.#storage.run(this.#name, async () => {
      this.#storage.assertInTransaction("getForUpdate");
      assertId(id);
      const result = await this.#storage.query<DocRow<T>>(this.#sql.getForUpdate, [id]);
      return result.rows[0]?.doc;
    });
  }

  /**
   * A transaction-level advisory lock: no row to create or erase, released by
   * the commit or rollback. Its 64-bit key hashes the schema too, so two
   * installations sharing a database never take turns on the same key.
   */
  lockKey(key: string): Promise<void> {
    return this.#storage.run(this.#name, async () => {
      this.#storage.assertInTransaction("lockKey");
      assertLockKey(key);
      await this.#storage.query(LOCK_KEY_SQL, [`${this.#name}:${key}`]);
    });
  }

  insert(doc: T): Promise<T> {
    return this.#storage.run(this.#name, async (declared) => {
      const { id, json } = serializeDocument(doc);
      await this.#storage.insert(declared, { sql: this.#sql.insert, unlessTaken: this.#sql.insertUnlessTaken }, [id, json]);
      return JSON.parse(json) as T;
    });
  }

  upsert(doc: T): Promise<T> {
    return this.#storage.run(this.#name, async (declared) => {
      const { id, json } = serializeDocument(doc);
      await this.#storage.write(declared, this.#sql.upsert, [id, json], hasUniqueIndex(declared));
      return JSON.parse(json) as T;
    });
  }

  upsertMany(docs: readonly WithJsonText<T>[]): Promise<void> {
    if (!Array.isArray(docs)) return Promise.reject(new TypeError("upsertMany expects an array"));
    const chunk = (start: number) =>
      this.#storage.run(this.#name, async (declared) => {
        // One statement cannot touch a row twice (ON CONFLICT): the last document with an id wins, as one by one.
        const byId = new Map<string, string>();
        for (const doc of docs.slice(start, start + UPSERT_ROWS_PER_STATEMENT)) {
          const { id, json } = serializeDocument(doc);
          byId.delete(id);
          byId.set(id, json);
        }
        if (byId.size === 0) return;
        await this.#storage.write(declared, this.#sql.upsertMany, [[...byId.keys()], [...byId.values()]], hasUniqueIndex(declared));
      });
    if (docs.length <= UPSERT_ROWS_PER_STATEMENT) return chunk(0);
    return this.#storage.transaction(async () => {
      for (let start = 0; start < docs.length; start += UPSERT_ROWS_PER_STATEMENT) await chunk(start);
    });
  }

  update(id: string, patch: Patch<T>, options?: { where?: Where<T> }): Promise<T | undefined> {
    return this.#storage.run(this.#name, async (declared) => {
      assertId(id);
      const { removed, set, fields } = patchParts(patch, id);
      const params = new Params([id, removed, set]);
      const condition = whereSql(options?.where, params);
      const result = await this.#storage.write<DocRow<T>>(
        declared,
        `UPDATE "${this.#name}" SET doc = (doc - $2::text[]) || $3::jsonb WHERE id = $1 AND ${condition} RETURNING doc`,
        params.values,
        touchesUniqueIndex(declared, fields),
      );
      return result.rows[0]?.doc;
    });
  }

  updateWhere(where: Where<T>, patch: Patch<T>): Promise<number> {
    return this.#storage.run(this.#name, async (declared) => {
      // A patch without an id check: every document keeps its own.
      const params = new Params();
      const condition = whereSql(where, params);
      const { removed, set, fields } = patchParts(patch, "");
      const result = await this.#storage.write(
        declared,
        `UPDATE "${this.#name}" SET doc = (doc - ${params.add(removed)}::text[]) || ${params.add(set)}::jsonb
         WHERE ${condition}`,
        params.values,
        touchesUniqueIndex(declared, fields),
      );
      return result.rowCount ?? 0;
    });
  }

  updateEach(updates: readonly IdPatch<T>[]): Promise<number> {
    if (!Array.isArray(updates)) return Promise.reject(new TypeError("updateEach expects an array"));
    // One statement cannot touch a row twice (an UPDATE ... FROM joins one source row per row): an id listed again starts the next.
    const runs: Array<Array<IdPatch<T>>> = [[]];
    let ids = new Set<string>();
    for (const update of updates) {
      if (ids.has(update.id)) {
        runs.push([]);
        ids = new Set();
      }
      ids.add(update.id);
      runs.at(-1)!.push(update);
    }
    const write = (run: ReadonlyArray<IdPatch<T>>) =>
      this.#storage.run(this.#name, async (declared) => {
        if (run.length === 0) return 0;
        const columns: [string[], string[], string[]] = [[], [], []];
        const fields = new Set<string>();
        for (const { id, patch } of run) {
          assertId(id);
          const parts = patchParts(patch, id);
          columns[0].push(id);
          columns[1].push(JSON.stringify(parts.removed));
          columns[2].push(parts.set);
          for (const field of parts.fields) fields.add(field);
        }
        const result = await this.#storage.write(declared, this.#sql.updateEach, columns, touchesUniqueIndex(declared, [...fields]));
        return result.rowCount ?? 0;
      });
    if (runs.length === 1) return write(runs[0]!);
    return this.#storage.transaction(async () => {
      let applied = 0;
      for (const run of runs) applied += await write(run);
      return applied;
    });
  }

  delete(id: string): Promise<boolean> {
    return this.#storage.run(this.#name, async (declared) => {
      assertId(id);
      const result = await this.#storage.write(declared, this.#sql.deleteById, [id], false);
      return (result.rowCount ?? 0) > 0;
    });
  }

  deleteWhere(where: Where<T>): Promise<number> {
    return this.#storage.run(this.#name, async (declared) => {
      const params = new Params();
      const condition = whereSql(where, params);
      const result = await this.#storage.write(declared, `DELETE FROM "${this.#name}" WHERE ${condition}`, params.values, false);
      return result.rowCount ?? 0;
    });
  }

  find(options: FindOptions<T> = {}): Promise<Page<T>> {
    return this.#storage.run(this.#name, async () => {
      assertLimit(options.limit);
      const query = findQuery(this.#name, options, options.limit === undefined ? undefined : options.limit + 1);
      const result = await this.#storage.query<DocRow<T>>(query.sql, query.params);
      return pageOf(
        result.rows.map((row) => row.doc),
        options.limit,
        () => sortKeys(options.orderBy),
      );
    });
  }

  /** Whole documents: a jsonb column comes parsed by the driver, so naming fields would save no parse. */
  async findFields<K extends FieldReadAlone<T>>(fields: readonly K[], options?: FindOptions<T>): Promise<Page<Pick<T, K | "id">>> {
    assertFields(fields);
    return this.find(options);
  }

  findOne(where: Where<T>, orderBy?: readonly OrderBy<T>[]): Promise<T | undefined> {
    return this.#storage.run(this.#name, async () => {
      const query = findQuery(this.#name, { where, orderBy }, 1);
      const result = await this.#storage.query<DocRow<T>>(query.sql, query.params);
      return result.rows[0]?.doc;
    });
  }

  count(where?: Where<T>): Promise<number> {
    return this.#storage.run(this.#name, async () => {
      const params = new Params();
      const condition = whereSql(where, params);
      const result = await this.#storage.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "${this.#name}" WHERE ${condition}`,
        params.values,
      );
      return result.rows[0].n;
    });
  }
}
