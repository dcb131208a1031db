import Database from "better-sqlite3";

/**
 * For tests that check how SQLite runs a collection's statements: every one seeks through an index, and
 * every declared index serves one (each costs an entry at every write of a row).
 */

/** The SQL of the statements on `table` prepared during `work`, but for the DDL and inserts. */
export async function statementsOn(table: string, work: () => Promise<void>): Promise<Set<string>> {
  const statements = new Set<string>();
  const prepare = Database.prototype.prepare;
  Database.prototype.prepare = function (this: Database.Database, sql: string) {
    if (sql.includes(`"${table}"`) && !/^\s*(CREATE|DROP|INSERT|EXPLAIN)/.test(sql)) statements.add(sql);
    return prepare.call(this, sql);
  } as typeof prepare;
  try {
    await work();
  } finally {
    Database.prototype.prepare = prepare;
  }
  return statements;
}

/** The names of the indexes of `table` in the database file, sorted, but for SQLite's own. */
export function indexesIn(db: Database.Database, table: string): string[] {
  const names = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND name NOT LIKE 'sqlite_%'`).pluck().all(table) as string[];
  return names.sort();
}

/** The CREATE TABLE statement of `table` as the database file holds it (its layout: rowid or WITHOUT ROWID). */
export function tableDdl(db: Database.Database, table: string): string {
  return db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").pluck().get(table) as string;
}

/** The steps of a statement's plan: it does not depend on the values, so every placeholder gets null. */
export function planOf(db: Database.Database, sql: string): string[] {
  const steps = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...Array<null>(sql.match(/\?/g)?.length ?? 0).fill(null)) as Array<{ detail: string }>;
  return steps.map((step) => step.detail);
}

/** The indexes a plan reads through. */
export function indexesRead(plan: readonly string[]): string[] {
  return plan.flatMap((detail) => /USING (?:COVERING )?INDEX (\S+)/.exec(detail)?.[1] ?? []);
}
