// Counts the SQLite commits that wrote something, in this process: a write statement run
// outside a transaction (autocommit), or a transaction that wrote (better-sqlite3's transaction
// functions begin and commit through statements too). Read-only transactions (the storage's
// read batches) are not counted.
import Database from "better-sqlite3";

interface CountedStatement {
  reader: boolean;
  source: string;
  database: { inTransaction: boolean };
}

let commits = 0;
let wroteInTransaction = false;

/** The commits that wrote so far. */
export const sqliteCommits = () => commits;

const statementPrototype = Object.getPrototypeOf(new Database(":memory:").prepare("SELECT 1")) as Record<"run" | "get", (...args: unknown[]) => unknown>;
/** A statement that may write: one that returns nothing, or a write that returns rows (`UPDATE … RETURNING`, run with `get`). */
const WRITES = /^(INSERT|UPDATE|DELETE|REPLACE)/;

function noteStatement(statement: CountedStatement): void {
  const source = statement.source.trim().toUpperCase();
  if (source.startsWith("BEGIN")) wroteInTransaction = false;
  else if (source === "COMMIT") {
    if (wroteInTransaction) commits++;
    wroteInTransaction = false;
  } else if ((!statement.reader || WRITES.test(source)) && !/^(SAVEPOINT|RELEASE|ROLLBACK)/.test(source)) {
    if (statement.database.inTransaction) wroteInTransaction = true;
    else commits++;
  }
}

for (const method of ["run", "get"] as const) {
  const original = statementPrototype[method];
  statementPrototype[method] = function (this: CountedStatement, ...args: unknown[]) {
    noteStatement(this);
    return original.apply(this, args);
  };
}
