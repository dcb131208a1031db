// The worker thread of write-thread.ts: writes the groups of calls it is sent, each group in one transaction on a
// connection of its own, and answers each call's changed rows or its failure. Plain JavaScript, as
// checkpoint-worker.mjs is: a worker thread does not inherit the loader hooks that let the main thread import
// TypeScript, and this needs nothing but better-sqlite3.
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";

const { filename, cacheKiB, autocheckpointPages } = workerData;
const db = new Database(filename);
db.pragma("synchronous = NORMAL");
db.pragma("busy_timeout = 5000");
if (cacheKiB !== undefined) db.pragma(`cache_size = -${cacheKiB}`);
db.pragma(`wal_autocheckpoint = ${autocheckpointPages}`);

/** Prepared once per SQL text; the texts are few (a statement per patch shape and padded row count). */
const STATEMENTS_KEPT = 200;
const statements = new Map();
function statement(sql) {
  let prepared = statements.get(sql);
  if (prepared === undefined) {
    prepared = db.prepare(sql);
    if (statements.size >= STATEMENTS_KEPT) statements.delete(statements.keys().next().value);
    statements.set(sql, prepared);
  }
  return prepared;
}

const begin = db.prepare("BEGIN IMMEDIATE");
const commit = db.prepare("COMMIT");
const rollback = db.prepare("ROLLBACK");

/** One call's statements: how many rows they changed. */
function write(call) {
  let changes = 0;
  for (const { sql, params } of call) changes += statement(sql).run(...params).changes;
  return changes;
}

function inTransaction(work) {
  begin.run();
  try {
    const result = work();
    commit.run();
    return result;
  } catch (error) {
    if (db.inTransaction) rollback.run();
    throw error;
  }
}

/** A failure as it crosses to the main thread: an error's message and SQLite code (its class does not cross). */
const failure = (error) => ({ message: String(error?.message ?? error), code: typeof error?.code === "string" ? error.code : undefined });

parentPort.on("message", (message) => {
  if (message === "stop") {
    db.close();
    parentPort.close();
    return;
  }
  const { calls } = message;
  let results;
  try {
    results = inTransaction(() => calls.map(write));
  } catch (error) {
    // One call's failure must not fail the calls beside it: each is written again alone.
    results =
      calls.length === 1
        ? [failure(error)]
        : calls.map((call) => {
            try {
              return inTransaction(() => write(call));
            } catch (alone) {
              return failure(alone);
            }
          });
  }
  parentPort.postMessage(results);
});

parentPort.postMessage("ready");
