import type { Condition, SqlValue } from "../shared/queries.ts";

/**
 * Generated SQL depends only on the shape of a query (fields, operators, null
 * operands, list lengths, whether operands are text, limit, sort), never on its
 * values, so it is built once per shape: hot paths run the same few shapes with
 * new values. Shapes are looked up in a tree, one step per part: the steps are
 * strings the caller's code already holds, so a lookup costs less than building
 * and hashing one key string per call (which took longer than SQLite takes to
 * run an indexed lookup).
 */
export class ShapeNode {
  sql: string | undefined;
  readonly #next = new Map<unknown, ShapeNode>();

  to(step: unknown): ShapeNode {
    let node = this.#next.get(step);
    if (node === undefined) this.#next.set(step, (node = new ShapeNode()));
    return node;
  }

  /** The node of these conditions' shape, below this one. */
  where(conditions: readonly Condition[]): ShapeNode {
    let node: ShapeNode = this;
    for (const condition of conditions) node = node.to(condition.field).to(operandKind(condition));
    return node.to(WHERE_END);
  }
}

const WHERE_END = Symbol("end of the where-clause");

/** The primary-key column has TEXT affinity: whether operands are text changes the SQL (see where-sql.ts). */
export const isText = (value: SqlValue) => value === null || typeof value === "string";

/**
 * The placeholders of an `in` list of `length` values: the length itself up to 8, then the next power of two,
 * past 1,024 the next multiple of 1,024 (up to 31,744); the list is padded with its last value (a repeat changes nothing in
 * `IN`). A prepared statement keeps its program in native memory (an `IN` of a few hundred placeholders costs
 * tens of kilobytes): one statement per exact length filled the statement cache with hundreds of them, most
 * of the memory a million-profile campaign held outside the JS heap.
 */
export function inPlaceholders(length: number): number {
  if (length <= 8) return length;
  if (length <= 1024) return 2 ** Math.ceil(Math.log2(length));
  // Never past SQLite's 32,766 parameters when the list itself is within them.
  return Math.min(Math.ceil(length / 1024) * 1024, Math.max(length, 31 * 1024));
}

/** What, beyond its field, decides a condition's SQL. */
function operandKind(condition: Condition): string | number {
  switch (condition.op) {
    case "eq":
      return condition.value === null ? "eq null" : isText(condition.value) ? "eq text" : "eq value";
    case "in":
      // The list's placeholders (inPlaceholders), negative when some operand is not text.
      return condition.values.every(isText) ? inPlaceholders(condition.values.length) : -inPlaceholders(condition.values.length) - 1;
    case "exists":
      return condition.present ? "exists" : "absent";
    default:
      return isText(condition.value) ? condition.op : `${condition.op} value`;
  }
}

/**
 * Shape trees by owner (a collection's declaration: its columns change the
 * SQL), emptied when they hold `limit` statements: shapes such as `in`
 * lengths can vary.
 */
export class ShapeCache {
  readonly #roots = new Map<object, ShapeNode>();
  #size = 0;

  constructor(private readonly limit: number) {}

  root(owner: object): ShapeNode {
    if (this.#size >= this.limit) {
      this.#roots.clear();
      this.#size = 0;
    }
    let root = this.#roots.get(owner);
    if (root === undefined) this.#roots.set(owner, (root = new ShapeNode()));
    return root;
  }

  /** Keeps the SQL built for a node on its first visit (callers read `node.sql` first). */
  store(node: ShapeNode, sql: string): string {
    node.sql = sql;
    this.#size++;
    return sql;
  }
}
