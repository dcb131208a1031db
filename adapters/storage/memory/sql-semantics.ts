import type { StoredDoc } from "../shared/documents.ts";
import {
  fieldValue,
  parseWhere,
  type Condition,
  type RangeOperator,
  type SortKey,
  type SqlValue,
} from "../shared/queries.ts";

/**
 * What SQLite computes for the memory adapter's queries, in JavaScript: value
 * comparison (NULL < numbers < text by code point), where-clauses as
 * predicates, and sort order. The conformance suite holds it to the SQLite adapter.
 */

/**
 * SQLite compares TEXT with memcmp over UTF-8, i.e. by code point. JavaScript's
 * `<` compares UTF-16 units, which puts astral characters (surrogates,
 * 0xD800-0xDFFF) before 0xE000-0xFFFF; shift them above to get code point order.
 */
function compareText(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** SQLite's order: NULL < numbers < text. */
function compareValues(a: SqlValue, b: SqlValue): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? -1 : 1;
  if (typeof a === "number") {
    if (typeof b !== "number") return -1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (typeof b === "number") return 1;
  return compareText(a, b);
}
type Test = (value: SqlValue) => boolean;

const RANGES: Record<RangeOperator, (comparison: number) => boolean> = {
  gt: (c) => c > 0,
  gte: (c) => c >= 0,
  lt: (c) => c < 0,
  lte: (c) => c <= 0,
};

/** SQL `=`: NULL on either side never matches. */
const equals = (x: SqlValue, v: SqlValue) => x !== null && v !== null && compareValues(x, v) === 0;
/** SQL `IS`: NULL-safe equality. */
const is = (x: SqlValue, v: SqlValue) => (x === null || v === null ? x === v : compareValues(x, v) === 0);

function conditionTest(condition: Condition): Test {
  switch (condition.op) {
    case "eq": {
      const v = condition.value;
      return v === null ? (x) => x === null : (x) => equals(x, v);
    }
    case "ne": {
      const v = condition.value;
      return (x) => !is(x, v);
    }
    case "in": {
      const list = condition.values;
      return (x) => list.some((v) => equals(x, v));
    }
    case "exists":
      return condition.present ? (x) => x !== null : (x) => x === null;
    default: {
      const v = condition.value;
      const accept = RANGES[condition.op];
      return (x) => x !== null && v !== null && accept(compareValues(x, v));
    }
  }
}

export function compileWhere(where: object | undefined): (doc: StoredDoc) => boolean {
  const checks = parseWhere(where).map((condition) => ({ field: condition.field, test: conditionTest(condition) }));
  return (doc) => checks.every(({ field, test }) => test(fieldValue(doc, field)));
}

/** NULL is the smallest value, so it comes first ascending and last descending, as in SQLite. */
export function compareSortValues(keys: readonly SortKey[], a: readonly SqlValue[], b: readonly SqlValue[]): number {
  for (let i = 0; i < keys.length; i++) {
    const c = compareValues(a[i], b[i]);
    if (c !== 0) return keys[i].descending ? -c : c;
  }
  return 0;
}
