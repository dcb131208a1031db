// The worker thread of checkpointer.ts: copies the WAL's pages into the database file when the writer
// asks (it wrote enough) or `maxIntervalMs` after the last copy, on a connection of its own. Plain JavaScript: a worker thread does not inherit the
// loader hooks that let the main thread import TypeScript, and this needs nothing but better-sqlite3.
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";

const { filename, tickMs, maxIntervalMs } = workerData;
const db = new Database(filename);
db.pragma("synchronous = NORMAL");
// A checkpoint copies pages from the WAL to the file: it needs no cache of its own.
db.pragma("cache_size = 16");

/** The writer asked for a copy (it wrote enough since its last ask). */
let asked = false;
let lastCopy = Date.now();

const timer = setInterval(() => {
  if (!asked && Date.now() - lastCopy < maxIntervalMs) return;
  asked = false;
  lastCopy = Date.now();
  try {
    // PASSIVE never waits for (nor blocks) the writer and readers: what it cannot copy now, it copies at a later tick.
    db.pragma("wal_checkpoint(PASSIVE)");
  } catch (error) {
    // A busy database is the next tick's business; anything else stops background checkpoints (the main thread takes over).
    if (error?.code !== "SQLITE_BUSY" && error?.code !== "SQLITE_LOCKED") throw error;
  }
}, tickMs);

parentPort.on("message", (message) => {
  if (message === "checkpoint") {
    asked = true;
    return;
  }
  if (message !== "stop") return;
  clearInterval(timer);
  db.close();
  parentPort.close();
});
