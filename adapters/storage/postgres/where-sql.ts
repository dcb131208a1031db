import {
  decodeCursor,
  parseWhere,
  sortKeys,
  type Condition,
  type RangeOperator,
  type SortKey,
  type SortSpec,
  type SqlValue,
} from "../shared/queries.ts";

/**
 * The where-language in PostgreSQL. Every field is compared through one
 * sortable key, `reachkit_key(doc -> 'field')` (see schema.ts): NULL for an
 * absent or null field, 0x01 + an order-preserving encoding of the float for
 * numbers and booleans (1/0), 0x02 + UTF-8 for text. Byte order of those keys
 * is SQLite's value order (NULL < numbers < text by code point), which the
 * conformance suite pins down, and one expression index per field serves
 * equality, ranges and ORDER BY alike. Operands are encoded the same way here.
 */

/** A bound parameter: a key (bytea), text for the id column, or a text array (removed fields, bulk ids). */
export type PgParam = Buffer | string | readonly string[] | null;

export interface PgFragment {
  sql: string;
  params: PgParam[];
}

/** The one expression used for a field, in indexes and in queries alike (PostgreSQL matches them by expression). */
export function keyExpr(field: string): string {
  return `reachkit_key(doc -> '${field}')`;
}

const NUMBER_TAG = 0x01;
const TEXT_TAG = 0x02;

/** The key of a value, byte for byte what `reachkit_key` computes in the database. */
export function keyOf(value: SqlValue): Buffer | null {
  if (value === null) return null;
  if (typeof value === "string") return Buffer.concat([Buffer.of(TEXT_TAG), Buffer.from(value, "utf8")]);
  const key = Buffer.alloc(9);
  key[0] = NUMBER_TAG;
  // -0 and 0 are the same number; the database side folds them the same way (abs).
  key.writeDoubleBE(value === 0 ? 0 : value, 1);
  if ((key[1] & 0x80) === 0) key[1] |= 0x80;
  else for (let i = 1; i < 9; i++) key[i] = ~key[i] & 0xff;
  return key;
}

const RANGE_SQL: Record<RangeOperator, string> = { gt: ">", gte: ">=", lt: "<", lte: "<=" };

/** The id column (text, "C" collation: code point order) serves text operands; other operands go through the key. */
const isText = (value: SqlValue) => value === null || typeof value === "string";

function usesIdColumn(condition: Condition): boolean {
  if (condition.field !== "id") return false;
  switch (condition.op) {
    case "exists":
      return true;
    case "in":
      return condition.values.every(isText);
    default:
      return isText(condition.value);
  }
}

/** Numbers placeholders from `first` on, so fragments can be appended to a statement's parameters. */
export class Params {
  readonly values: PgParam[];

  constructor(initial: PgParam[] = []) {
    this.values = initial;
  }

  add(value: PgParam): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

export function whereSql(where: object | undefined, params: Params): string {
  const clauses: string[] = [];
  for (const condition of parseWhere(where)) {
    const idColumn = usesIdColumn(condition);
    const expr = idColumn ? "id" : keyExpr(condition.field);
    // usesIdColumn only holds for text (or null) operands.
    const operand = (value: SqlValue) => params.add(idColumn ? (value as string | null) : keyOf(value));
    switch (condition.op) {
      case "eq":
        clauses.push(condition.value === null ? `${expr} IS NULL` : `${expr} = ${operand(condition.value)}`);
        break;
      case "ne":
        clauses.push(`${expr} IS DISTINCT FROM ${operand(condition.value)}`);
        break;
      case "in": {
        const values = condition.values.filter((v) => v !== null);
        clauses.push(values.length === 0 ? "FALSE" : `${expr} IN (${values.map(operand).join(", ")})`);
        break;
      }
      case "exists":
        clauses.push(condition.present ? `${expr} IS NOT NULL` : `${expr} IS NULL`);
        break;
      default:
        clauses.push(`${expr} ${RANGE_SQL[condition.op]} ${operand(condition.value)}`);
    }
  }
  return clauses.length === 0 ? "TRUE" : clauses.join(" AND ");
}

function sortExpr(field: string): string {
  return field === "id" ? "id" : keyExpr(field);
}

/** NULL is the smallest value: first ascending, last descending (the port's rule, and the indexes' order). */
export function orderSql(keys: readonly SortKey[]): string {
  return keys
    .map((k) => `${sortExpr(k.field)} ${k.descending ? "DESC NULLS LAST" : "ASC NULLS FIRST"}`)
    .join(", ");
}

/**
 * Rows strictly after the cursor in the sort order, key by key:
 * `k1 after c1 OR (k1 = c1 AND k2 after c2) ...`, with NULL as the smallest value.
 */
function afterCursorSql(keys: readonly SortKey[], values: readonly SqlValue[], params: Params): string {
  const alternatives: string[] = [];
  const equalities: string[] = [];
  keys.forEach((key, i) => {
    const expr = sortExpr(key.field);
    // decodeCursor guarantees a string for the id key.
    const value = key.field === "id" ? (values[i] as string) : keyOf(values[i]);
    const bound = value === null ? "" : params.add(value);
    let after: string | undefined;
    if (!key.descending) after = value === null ? `${expr} IS NOT NULL` : `${expr} > ${bound}`;
    else if (value !== null) after = `(${expr} < ${bound} OR ${expr} IS NULL)`;
    if (after !== undefined) alternatives.push([...equalities, after].join(" AND "));
    equalities.push(value === null ? `${expr} IS NULL` : `${expr} = ${bound}`);
  });
  return alternatives.length === 0 ? "FALSE" : alternatives.map((a) => `(${a})`).join(" OR ");
}

/** The port's FindOptions with the document type erased. */
export interface QueryOptions {
  where?: object;
  orderBy?: readonly SortSpec[];
  after?: string;
}

/** The SELECT behind `find` (LIMIT `fetch`, none when undefined). */
export function findQuery(table: string, options: QueryOptions, fetch: number | undefined): PgFragment {
  const keys = sortKeys(options.orderBy);
  const params = new Params();
  let sql = `SELECT doc FROM "${table}" WHERE ${whereSql(options.where, params)}`;
  if (options.after !== undefined) sql += ` AND (${afterCursorSql(keys, decodeCursor(options.after, keys), params)})`;
  sql += ` ORDER BY ${orderSql(keys)}`;
  if (fetch !== undefined) sql += ` LIMIT ${params.add(String(fetch))}`;
  return { sql, params: params.values };
}
