// Counts the SQLite commits that wrote something, in this process: a write statement run
// outside a transaction (autocommit), or a transaction that wrote (better-sqlite3's transaction
// functions begin and commit through statements too). Read-only transactions (the storage's
// read batches) are not counted.
// The counter wraps every statement's run and get (a few µs a delivery in bench:webhooks): it is installed only
// while counting (`withSqliteCommitsCounted`), so that timed rounds run without it.
// BENCH_SQLITE_TIMES=1 also times each statement by kind (its main-thread time in run or get, rows written by
// an UPDATE ... FROM (VALUES ...) beside it) and prints the totals when the process exits (every phase of the run together): where
// its SQLite time goes, without a profiler's sampling.
import Database from "better-sqlite3";

interface CountedStatement {
  reader: boolean;
  source: string;
  database: { inTransaction: boolean };
}

let commits = 0;
let wroteInTransaction = false;

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

const timed = process.env.BENCH_SQLITE_TIMES === "1";
/** Time (ns), runs and rows changed, by the statement's first words. */
const times = new Map<string, { ns: bigint; runs: number; changes: number }>();

function statementKind(source: string): string {
  if (source.includes("FROM (VALUES")) return "UPDATE ... FROM (VALUES)";
  return source.trim().split(/\s+/, 2).join(" ").toUpperCase();
}

const originals = { run: statementPrototype.run, get: statementPrototype.get };

function counting(method: "run" | "get") {
  const original = originals[method];
  return function (this: CountedStatement, ...args: unknown[]) {
    noteStatement(this);
    if (!timed) return original.apply(this, args);
    const start = process.hrtime.bigint();
    const result = original.apply(this, args);
    const key = statementKind(this.source);
    const entry = times.get(key) ?? { ns: 0n, runs: 0, changes: 0 };
    entry.ns += process.hrtime.bigint() - start;
    entry.runs++;
    if (method === "run") entry.changes += (result as { changes: number }).changes;
    times.set(key, entry);
    return result;
  };
}

function install(): void {
  if (statementPrototype.run !== originals.run) return;
  statementPrototype.run = counting("run");
  statementPrototype.get = counting("get");
}

/** Runs `work` with the counter installed (removed after it, unless timing): its result, and the commits that wrote during it. */
export async function withSqliteCommitsCounted<R>(work: () => Promise<R>): Promise<{ result: R; commits: number }> {
  install();
  const before = commits;
  try {
    const result = await work();
    return { result, commits: commits - before };
  } finally {
    if (!timed) {
      statementPrototype.run = originals.run;
      statementPrototype.get = originals.get;
    }
  }
}

if (timed) {
  install();
  process.on("exit", () => {
    const rows = [...times].sort((a, b) => Number(b[1].ns - a[1].ns)).slice(0, 12);
    for (const [key, { ns, runs, changes }] of rows) {
      const micros = Number(ns) / 1000;
      console.log(`sqlite ${key}: ${Math.round(micros / 1000)} ms in ${runs} runs (${(micros / runs).toFixed(1)} µs each${changes > 0 ? `, ${(micros / changes).toFixed(1)} µs a row changed, ${(changes / runs).toFixed(1)} rows a run` : ""})`);
    }
  });
}
