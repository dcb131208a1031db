import { JsonText } from "../../../src/index.ts";
import type { IndexDeclaration } from "../shared/documents.ts";

/**
 * Indexed fields in columns of their own. An index on `json_extract(doc,
 * '$.f')` made SQLite parse the whole document at every write (a catalog
 * product row is about 1.4 KB): about 6% of the CPU of a catalog save. Each top-level
 * field an index names gets a column the adapter writes beside `doc`, and the
 * index is built on the columns. A column always holds exactly what
 * `json_extract(doc, '$.f')` returns (same value, same `typeof()`), so queries
 * may read either and answer the same. A field read alone (a collection's
 * `fieldsReadAlone`) gets one too: `findFields` reads a string or a number
 * from it as the document holds it, and parses no document.
 */

/** A top-level field kept in a column of its own. */
export interface FieldColumn {
  field: string;
  /** The quoted column name, ready for SQL text. */
  sql: string;
}

/** Deterministic, so a later run finds the column an earlier one added. */
export function columnName(field: string): string {
  return `${COLUMN_PREFIX}${field}`;
}

const COLUMN_PREFIX = "f_";

/** The field a column holds: columns are named after their fields, which are case-sensitive. */
export function fieldOfColumn(column: string): string {
  return column.startsWith(COLUMN_PREFIX) ? column.slice(COLUMN_PREFIX.length) : column;
}

/** The fields with columns: those named by `indexes`, then those read alone, each once, in order of first mention. */
export function columnFields(indexes: readonly IndexDeclaration[], fieldsReadAlone: readonly string[]): string[] {
  return [...new Set([...indexes.flatMap((index) => index.fields), ...fieldsReadAlone])];
}

export function fieldColumns(fields: readonly string[]): FieldColumn[] {
  return fields.map((field) => ({ field, sql: `"${columnName(field)}"` }));
}

/**
 * The SQL value of one column: a value bound as is, else (for what only
 * SQLite can render exactly) the JSON text of the field, which SQLite reads
 * with `json_extract(?, '$')`. coalesce stops at the first non-NULL, so the
 * common case parses nothing.
 */
export const columnValueSql = (value: string, json: string) => `coalesce(${value}, json_extract(${json}, '$'))`;
export const COLUMN_VALUE_SQL = columnValueSql("?", "?");

/** In `u` mode a surrogate pair is one code point: only a lone half matches. */
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * Pushes the two parameters of COLUMN_VALUE_SQL for each column. The field
 * is read as JSON.stringify reads it (own enumerable properties).
 */
export function pushColumnParams(params: unknown[], doc: Record<string, unknown>, columns: readonly FieldColumn[]): void {
  for (const { field } of columns) {
    const value = Object.hasOwn(doc, field) ? doc[field] : undefined;
    switch (typeof value) {
      case "string":
        // A lone surrogate is bound as U+FFFD but json_extract decodes its \u escape to other bytes.
        if (!LONE_SURROGATE.test(value)) params.push(value, null);
        else params.push(null, JSON.stringify(value));
        break;
      case "number":
        // json_extract reads a safe integer's digits as INTEGER (better-sqlite3 binds numbers as REAL,
        // bigints as INTEGER). Other numbers are read by SQLite from the very digits JSON.stringify writes:
        // past 2^53 those are rounded (2^62 is written 4611686018427388000), past 2^63 they are REAL,
        // and a fraction's digits are parsed by SQLite's own conversion. NaN and infinities are written null.
        if (Number.isSafeInteger(value)) params.push(BigInt(value), null);
        else params.push(null, Number.isFinite(value) ? JSON.stringify(value) : null);
        break;
      case "boolean":
        params.push(value ? 1n : 0n, null);
        break;
      case "object":
        if (value === null) params.push(null, null);
        else params.push(null, value instanceof JsonText ? value.text : (JSON.stringify(value) ?? null));
        break;
      default:
        // undefined, functions and symbols: JSON.stringify leaves the field out.
        params.push(null, null);
    }
  }
}

/**
 * The indexes of the columns whose parameters (pushColumnParams) differ between `before` and `after`.
 * An UPDATE rewrites the entries of every index on a column it sets, changed or not (a job's done mark
 * rewrote all six of its indexes' entries, an outbox message's in-flight mark all five for none changed):
 * updates set only these.
 */
export function changedColumns(before: readonly unknown[], after: readonly unknown[]): number[] {
  const changed: number[] = [];
  for (let column = 0; 2 * column < after.length; column++) {
    if (before[2 * column] !== after[2 * column] || before[2 * column + 1] !== after[2 * column + 1]) changed.push(column);
  }
  return changed;
}

/** The statements that write a document (and so its columns), built once per declaration. */
export class WriteSql {
  readonly insert: string;
  readonly #table: string;
  readonly #columns: readonly FieldColumn[];
  /** The column list of an INSERT: id, doc, the fields' columns. */
  readonly #names: string;
  readonly #row: string;
  readonly #upserts = new Map<number, string>();
  /** By the changed columns' numbers: a collection's updates change a few sets of fields. */
  readonly #updates = new Map<string, string>();

  constructor(table: string, columns: readonly FieldColumn[]) {
    this.#table = `"${table}"`;
    this.#columns = columns;
    this.#names = ["id", "doc", ...columns.map((c) => c.sql)].join(", ");
    this.#row = `(?, ?${columns.map(() => `, ${COLUMN_VALUE_SQL}`).join("")})`;
    this.insert = `INSERT INTO ${this.#table} (${this.#names}) VALUES ${this.#row}`;
  }

  /** Rewrites a document and the columns numbered `changed` (changedColumns); parameters: doc, those columns', id. */
  updateById(changed: readonly number[]): string {
    const key = changed.join(",");
    let sql = this.#updates.get(key);
    if (sql === undefined) {
      const sets = ["doc = ?", ...changed.map((column) => `${this.#columns[column]!.sql} = ${COLUMN_VALUE_SQL}`)].join(", ");
      sql = `UPDATE ${this.#table} SET ${sets} WHERE id = ?`;
      this.#updates.set(key, sql);
    }
    return sql;
  }

  /** Inserts or replaces `rows` documents; parameters per row: id, doc, the columns'. */
  upsert(rows: number): string {
    let sql = this.#upserts.get(rows);
    if (sql === undefined) {
      const sets = ["doc", ...this.#columns.map((c) => c.sql)].map((c) => `${c} = excluded.${c}`).join(", ");
      const values = Array.from({ length: rows }, () => this.#row).join(", ");
      sql = `INSERT INTO ${this.#table} (${this.#names}) VALUES ${values} ON CONFLICT(id) DO UPDATE SET ${sets}`;
      this.#upserts.set(rows, sql);
    }
    return sql;
  }
}
