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
import type { DeclaredCollection } from "./schema.ts";
import { inPlaceholders, isText, ShapeCache } from "./shape-cache.ts";

export interface SqlFragment {
  sql: string;
  params: SqlValue[];
}

/** The port's FindOptions with the document type erased. */
export interface QueryOptions {
  where?: object;
  orderBy?: readonly SortSpec[];
  after?: string;
}

/**
 * A field's value: the column of an indexed field (which holds exactly what
 * json_extract returns, and which its indexes are built on), json_extract
 * for any other field.
 */
function fieldExpr(collection: DeclaredCollection, field: string): string {
  return collection.columnOf.get(field)?.sql ?? `json_extract(doc, '$.${field}')`;
}

const RANGE_SQL: Record<RangeOperator, string> = { gt: ">", gte: ">=", lt: "<", lte: "<=" };

/**
 * The primary-key column is faster than json_extract for `id`, but its TEXT
 * affinity would make `{id: 5}` match "5": it is used only for text operands.
 */
function isTextCondition(condition: Condition): boolean {
  switch (condition.op) {
    case "exists":
      return true;
    case "in":
      return condition.values.every(isText);
    default:
      return isText(condition.value);
  }
}

/**
 * Bare where-clauses (updates, deletes, counts, cursor finds) and plain finds,
 * by shape, per declaration of a collection: its columns decide the SQL.
 */
const shapes = new ShapeCache(1000);
const BARE_WHERE = "where";
const PLAIN_FIND = "find";

export function compileWhere(collection: DeclaredCollection, where: object | undefined): SqlFragment {
  const conditions = parseWhere(where);
  const node = shapes.root(collection).to(BARE_WHERE).where(conditions);
  return { sql: node.sql ?? shapes.store(node, whereSql(collection, conditions)), params: paramsOf(conditions) };
}

function whereSql(collection: DeclaredCollection, conditions: readonly Condition[]): string {
  const idColumn = conditions.every((c) => c.field !== "id" || isTextCondition(c));
  // Rows named by id are looked up by it. Without statistics SQLite takes an equality on an index's first column
  // for about ten rows, fewer than a list of ids: a claim of 24 jobs by id and status scanned every queued job
  // through (status, runAt). A unary + keeps the other columns out of the choice; the columns have no type, hence
  // no affinity, so the comparison is the same.
  const byId = idColumn && conditions.some((c) => c.field === "id" && (c.op === "eq" || c.op === "in"));
  const clauses: string[] = [];
  for (const condition of conditions) {
    const column = condition.field === "id" ? undefined : collection.columnOf.get(condition.field)?.sql;
    const expr = condition.field === "id" && idColumn ? "id" : byId && column !== undefined ? `+${column}` : fieldExpr(collection, condition.field);
    switch (condition.op) {
      case "eq":
        clauses.push(condition.value === null ? `${expr} IS NULL` : `${expr} = ?`);
        break;
      case "ne":
        clauses.push(`${expr} IS NOT ?`);
        break;
      case "in":
        clauses.push(condition.values.length === 0 ? "0" : `${expr} IN (${"?, ".repeat(inPlaceholders(condition.values.length) - 1)}?)`);
        break;
      case "exists":
        clauses.push(condition.present ? `${expr} IS NOT NULL` : `${expr} IS NULL`);
        break;
      default:
        clauses.push(`${expr} ${RANGE_SQL[condition.op]} ?`);
    }
  }
  return clauses.length === 0 ? "1" : clauses.join(" AND ");
}

/** The bound parameters of `whereSql`, in the same order. */
function paramsOf(conditions: readonly Condition[]): SqlValue[] {
  const params: SqlValue[] = [];
  for (const condition of conditions) {
    switch (condition.op) {
      case "eq":
        if (condition.value !== null) params.push(condition.value);
        break;
      case "in":
        for (const value of condition.values) params.push(value);
        for (let pad = inPlaceholders(condition.values.length) - condition.values.length; pad > 0; pad--) params.push(condition.values.at(-1)!);
        break;
      case "exists":
        break;
      default:
        params.push(condition.value);
    }
  }
  return params;
}

function sortExpr(collection: DeclaredCollection, field: string): string {
  return field === "id" ? "id" : fieldExpr(collection, field);
}

/** SQLite already sorts NULL first ascending and last descending, which is the port's rule. */
function orderSql(collection: DeclaredCollection, keys: readonly SortKey[]): string {
  return keys.map((k) => `${sortExpr(collection, k.field)} ${k.descending ? "DESC" : "ASC"}`).join(", ");
}

/**
 * Rows strictly after the cursor in the sort order, written out key by key
 * (`k1 after c1 OR (k1 IS c1 AND k2 after c2) ...`) because row-value
 * comparison cannot express mixed directions or NULLs sorting first.
 */
function keysetSql(collection: DeclaredCollection, keys: readonly SortKey[], values: readonly SqlValue[]): SqlFragment {
  const alternatives: string[] = [];
  const params: SqlValue[] = [];
  const equalities: string[] = [];
  const equalityParams: SqlValue[] = [];
  keys.forEach((key, i) => {
    const expr = sortExpr(collection, key.field);
    const value = values[i];
    const after = strictlyAfter(expr, key.descending, value);
    if (after.length > 0) {
      const either = after.length === 1 ? after[0].sql : `(${after.map((a) => a.sql).join(" OR ")})`;
      alternatives.push([...equalities, either].join(" AND "));
      params.push(...equalityParams, ...after.flatMap((a) => a.params));
    }
    equalities.push(`${expr} IS ?`);
    equalityParams.push(value);
  });
  if (alternatives.length === 0) return { sql: "0", params: [] };
  let sql = alternatives.map((a) => `(${a})`).join(" OR ");
  // A plain lower bound on the first key lets SQLite range-scan an index on it.
  const first = keys[0];
  if (!first.descending && values[0] !== null) {
    sql = `${sortExpr(collection, first.field)} >= ? AND (${sql})`;
    params.unshift(values[0]);
  }
  return { sql, params };
}

/**
 * The values of one key that sort strictly after `value`, as index-friendly
 * alternatives: NULL is the smallest value, so ascending it comes first and
 * descending it comes after every non-null value.
 */
function strictlyAfter(expr: string, descending: boolean, value: SqlValue): SqlFragment[] {
  if (!descending) {
    return value === null ? [{ sql: `${expr} IS NOT NULL`, params: [] }] : [{ sql: `${expr} > ?`, params: [value] }];
  }
  return value === null ? [] : [{ sql: `${expr} < ?`, params: [value] }, { sql: `${expr} IS NULL`, params: [] }];
}

/**
 * The rows after a cursor, split into segments that follow each other in sort
 * order: first the rows sharing the cursor's first sort value (the remaining
 * keys decide), then each range strictly after it. Querying the segments one
 * by one keeps every query a plain index range; a single query with ORs made
 * SQLite scan (and json_extract) everything before the cursor on every page.
 */
function cursorSegments(collection: DeclaredCollection, keys: readonly SortKey[], values: readonly SqlValue[]): SqlFragment[] {
  const [first, ...rest] = keys;
  const expr = sortExpr(collection, first.field);
  const segments: SqlFragment[] = [];
  if (rest.length > 0) {
    const tail = keysetSql(collection, rest, values.slice(1));
    if (tail.sql !== "0") {
      segments.push(
        values[0] === null
          ? { sql: `${expr} IS NULL AND (${tail.sql})`, params: tail.params }
          : { sql: `${expr} = ? AND (${tail.sql})`, params: [values[0], ...tail.params] },
      );
    }
  }
  return [...segments, ...strictlyAfter(expr, first.descending, values[0])];
}

/**
 * The SELECTs behind `find`, to run in order until `fetch` rows are found (the
 * LIMIT of each is `fetch`, absent for all). Without a cursor
 * there is one. Exported so tests can EXPLAIN the exact SQL the adapter runs.
 */
export function findQueries(collection: DeclaredCollection, options: QueryOptions, fetch: number | undefined, selected = "doc"): SqlFragment[] {
  if (options.after === undefined) return [plainFindQuery(collection, options, fetch, selected)];
  const keys = sortKeys(options.orderBy);
  const where = compileWhere(collection, options.where);
  const select = `SELECT ${selected} FROM "${collection.name}" WHERE ${where.sql}`;
  const tail = ` ORDER BY ${orderSql(collection, keys)}${limitSql(fetch)}`;
  return cursorSegments(collection, keys, decodeCursor(options.after, keys)).map((segment) => ({
    sql: `${select} AND (${segment.sql})${tail}`,
    params: [...where.params, ...segment.params],
  }));
}

/**
 * The LIMIT as a literal: with a bound `LIMIT ?` SQLite runs an indexed point
 * lookup about five times slower (measured: 10 µs against 2 µs per row).
 */
export function limitSql(fetch: number | undefined): string {
  if (fetch === undefined) return "";
  if (!Number.isSafeInteger(fetch) || fetch < 1) throw new Error(`limit must be a positive integer, got ${String(fetch)}`);
  return ` LIMIT ${fetch}`;
}

/**
 * A find without a cursor (every findOne, most finds), its SQL built once per
 * table, where shape, limit and sort. The path holds the caller's raw sort
 * fields, so a bad one misses and fails validation when the SQL is built.
 */
function plainFindQuery(collection: DeclaredCollection, options: QueryOptions, fetch: number | undefined, selected: string): SqlFragment {
  const conditions = parseWhere(options.where);
  let node = shapes.root(collection).to(PLAIN_FIND).to(selected).where(conditions).to(fetch);
  for (const entry of options.orderBy ?? []) node = node.to(entry.field).to(entry.direction);
  const sql =
    node.sql ??
    shapes.store(
      node,
      `SELECT ${selected} FROM "${collection.name}" WHERE ${whereSql(collection, conditions)} ORDER BY ${orderSql(collection, sortKeys(options.orderBy))}${limitSql(fetch)}`,
    );
  return { sql, params: paramsOf(conditions) };
}
