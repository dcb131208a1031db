// The SQL of the baselines. A baseline stands for reachkit's work done by the fastest plain means, on
// reachkit's tables: it writes the same rows with the same indexed columns (`f_<field>` beside `doc`, see
// docs/architecture.md) and reads through the same indexes. A query that filters on json_extract(doc, ...)
// where reachkit reads an indexed column scans the whole table (the bare eligibility server answered 10
// requests a second at 100,000 subscribers), and a ratio beside it means nothing. So a statement whose
// plan scans a table or a whole index is refused when it is prepared: the benchmark fails before it measures.
import type Database from "better-sqlite3";

/** The step of a statement's plan that reads a whole table or index, or undefined when every step seeks. */
export function scanIn(db: Database.Database, sql: string): string | undefined {
  // The plan does not depend on the values; every placeholder gets null (the baselines' SQL has no ? in literals).
  const placeholders = sql.match(/\?/g)?.length ?? 0;
  const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...Array<null>(placeholders).fill(null)) as Array<{ detail: string }>;
  // "SCAN t" reads a whole table, "SCAN t USING INDEX i" a whole index; "SEARCH" seeks through an index or the key.
  return plan.map((step) => step.detail).find((detail) => detail.startsWith("SCAN ") && detail !== "SCAN CONSTANT ROW");
}

/** Prepares `sql` after checking that SQLite runs it through an index or the primary key; throws otherwise. */
export function indexedStatement(db: Database.Database, sql: string): Database.Statement {
  const scan = scanIn(db, sql);
  if (scan !== undefined) throw new Error(`a baseline statement reads a whole table or index (${scan}): ${sql}`);
  return db.prepare(sql);
}

/**
 * A plain INSERT of documents into one of reachkit's tables: the document's JSON and the columns of its
 * indexed fields, valued as reachkit values them (text, whole numbers as INTEGER, booleans as 1 or 0, null).
 */
export function rowInserter<T extends { id: string }>(db: Database.Database, table: string): (doc: T) => void {
  const columns = db.prepare(`SELECT name FROM pragma_table_info(?) WHERE name LIKE 'f\\_%' ESCAPE '\\'`).pluck().all(table) as string[];
  const fields = columns.map((column) => column.slice("f_".length));
  const insert = indexedStatement(db, `INSERT INTO "${table}" (id, doc${columns.map((c) => `, "${c}"`).join("")}) VALUES (?, ?${columns.map(() => ", ?").join("")})`);
  return (doc) => insert.run(doc.id, JSON.stringify(doc), ...fields.map((field) => columnValue((doc as Record<string, unknown>)[field])));
}

function columnValue(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (typeof value === "boolean") return value ? 1n : 0n;
  if (Number.isSafeInteger(value)) return BigInt(value as number);
  return typeof value === "object" ? JSON.stringify(value) : value;
}
