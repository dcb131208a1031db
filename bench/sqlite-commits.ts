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

const statementPrototype = Object.getPrototypeOf(new Database(":memory:").prepare("SELECT 1")) as { run(...args: unknown[]): unknown };
const run = statementPrototype.run;
statementPrototype.run = function (this: CountedStatement, ...args: unknown[]) {
  const source = this.source.trim().toUpperCase();
  const wasInTransaction = this.database.inTransaction;
  if (source.startsWith("BEGIN")) wroteInTransaction = false;
  else if (source === "COMMIT") {
    if (wroteInTransaction) commits++;
    wroteInTransaction = false;
  } else if (!this.reader && !/^(SAVEPOINT|RELEASE|ROLLBACK)/.test(source)) {
    if (wasInTransaction) wroteInTransaction = true;
    else commits++;
  }
  return run.apply(this, args);
};
