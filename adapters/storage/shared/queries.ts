import { InvalidCursorError, type Page } from "../../../src/index.ts";
import { assertFieldName, isPlainObject } from "./documents.ts";

/**
 * The where-language, sort keys, cursors and pages, as every adapter reads
 * them. Values follow SQLite's `json_extract`, the reference semantics the
 * conformance suite pins down. Internal to the adapters.
 */

/**
 * What SQLite's `json_extract` returns, and what a bound parameter can be:
 * booleans become 1/0, objects and arrays their JSON text.
 */
export type SqlValue = string | number | null;

export function sqlValueOf(value: unknown): SqlValue {
  if (value === undefined || value === null) return null;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "number" || typeof value === "string") return value;
  return JSON.stringify(value);
}

/** A top-level field as SQLite sees it; own properties only (`constructor` is not a field). */
export function fieldValue(doc: object, field: string): SqlValue {
  return sqlValueOf(Object.hasOwn(doc, field) ? (doc as Record<string, unknown>)[field] : undefined);
}

/** `findFields`' fields, checked: a non-empty list of top-level field names. */
export function assertFields(fields: unknown): asserts fields is readonly string[] {
  if (!Array.isArray(fields) || fields.length === 0) throw new TypeError("findFields expects a non-empty array of field names");
  fields.forEach(assertFieldName);
}

export type RangeOperator = "gt" | "gte" | "lt" | "lte";

/** One validated comparison of a where-clause; a where is the AND of its conditions. */
export type Condition =
  | { field: string; op: "eq" | "ne"; value: SqlValue }
  | { field: string; op: RangeOperator; value: SqlValue }
  | { field: string; op: "in"; values: SqlValue[] }
  | { field: string; op: "exists"; present: boolean };

const OPERATORS = new Set(["eq", "ne", "in", "gt", "gte", "lt", "lte", "exists"]);

function operand(value: unknown, field: string, operator: string): SqlValue {
  if (value === null) return null;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isFinite(value)) return value;
  throw new Error(`where.${field}.${operator}: expected a string, finite number, boolean or null`);
}

/**
 * Validates a where-clause and flattens it into conditions, in the order they
 * were written. A bare value means `eq`; an operator set to undefined is left out.
 */
export function parseWhere(where: object | undefined): Condition[] {
  if (where === undefined) return [];
  if (!isPlainObject(where)) throw new Error("where must be an object");
  const conditions: Condition[] = [];
  // for-in with an own-property check, not Object.entries: every query passes here, and the entry arrays cost.
  for (const field in where) {
    if (!Object.hasOwn(where, field)) continue;
    const condition = (where as Record<string, unknown>)[field];
    if (condition === undefined) continue;
    assertFieldName(field);
    if (!isPlainObject(condition)) {
      conditions.push({ field, op: "eq", value: operand(condition, field, "eq") });
      continue;
    }
    for (const [op, raw] of Object.entries(condition)) {
      if (!OPERATORS.has(op)) throw new Error(`where.${field}: unknown operator ${JSON.stringify(op)}`);
      if (raw === undefined) continue;
      if (op === "in") {
        if (!Array.isArray(raw)) throw new Error(`where.${field}.in: expected an array`);
        conditions.push({ field, op, values: raw.map((v) => operand(v, field, op)) });
      } else if (op === "exists") {
        if (typeof raw !== "boolean") throw new Error(`where.${field}.exists: expected a boolean`);
        conditions.push({ field, op, present: raw });
      } else {
        conditions.push({ field, op: op as "eq" | "ne" | RangeOperator, value: operand(raw, field, op) });
      }
    }
  }
  return conditions;
}

/** The port's OrderBy with the document type erased. */
export interface SortSpec {
  field: string;
  direction?: "asc" | "desc";
}

export interface SortKey {
  field: string;
  descending: boolean;
}

/** The caller's sort keys, then `id` ascending; keys after an `id` key could never matter. */
export function sortKeys(orderBy: readonly SortSpec[] | undefined): SortKey[] {
  const keys: SortKey[] = [];
  for (const entry of orderBy ?? []) {
    assertFieldName(entry.field);
    if (entry.direction !== undefined && entry.direction !== "asc" && entry.direction !== "desc") {
      throw new Error(`orderBy.${entry.field}: direction must be "asc" or "desc"`);
    }
    keys.push({ field: entry.field, descending: entry.direction === "desc" });
    if (entry.field === "id") return keys;
  }
  keys.push({ field: "id", descending: false });
  return keys;
}

export function assertLimit(limit: number | undefined): void {
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1)) {
    throw new Error(`limit must be a positive integer, got ${String(limit)}`);
  }
}

/** The cursor is the last row's sort values; opaque to callers. */
export function encodeCursor(values: readonly SqlValue[]): string {
  return Buffer.from(JSON.stringify(values), "utf8").toString("base64url");
}

export function decodeCursor(cursor: string, keys: readonly SortKey[]): SqlValue[] {
  let values: unknown;
  try {
    if (typeof cursor !== "string" || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error("not base64url");
    values = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw new InvalidCursorError();
  }
  const valid =
    Array.isArray(values) &&
    values.length === keys.length &&
    values.every((v, i) =>
      keys[i].field === "id"
        ? typeof v === "string"
        : v === null || typeof v === "string" || (typeof v === "number" && Number.isFinite(v)),
    );
  if (!valid) throw new InvalidCursorError("malformed cursor (or it belongs to a different orderBy)");
  return values as SqlValue[];
}

/**
 * The page for documents fetched with one extra beyond `limit`, in sort order:
 * the extra one only tells that more follow. Truncates `items` in place. The
 * sort keys are asked for only when a cursor is made.
 */
export function pageOf<T extends object>(items: T[], limit: number | undefined, keysOf: () => readonly SortKey[]): Page<T> {
  if (limit === undefined || items.length <= limit) return { items };
  items.length = limit;
  const last = items[limit - 1];
  return { items, nextCursor: encodeCursor(keysOf().map((key) => fieldValue(last, key.field))) };
}
