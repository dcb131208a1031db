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

/** What a statement is to the count, worked out once per statement: its text never changes. */
type Kind = "begin" | "commit" | "write" | "other";
const kinds = new WeakMap<CountedStatement, Kind>();

function kindOf(statement: CountedStatement): Kind {
  const source = statement.source.trim().toUpperCase();
  if (source.startsWith("BEGIN")) return "begin";
  if (source === "COMMIT") return "commit";
  if ((!statement.reader || WRITES.test(source)) && !/^(SAVEPOINT|RELEASE|ROLLBACK)/.test(source)) return "write";
  return "other";
}

function noteStatement(statement: CountedStatement): void {
  let kind = kinds.get(statement);
  if (kind === undefined) kinds.set(statement, (kind = kindOf(statement)));
  if (kind === "begin") wroteInTransaction = false;
  else if (kind === "commit") {
    if (wroteInTransaction) commits++;
    wroteInTransaction = false;
  } else if (kind === "write") {
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
