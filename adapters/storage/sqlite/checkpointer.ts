import { resolve } from "node:path";
import { Worker } from "node:worker_threads";
import type Database from "better-sqlite3";

/**
 * Background checkpoints start once a connection has written this much: about
 * what one automatic checkpoint copies (1,000 pages of 4 KiB). Starting a
 * worker thread takes about 0.2 s; a process that writes little never pays for one.
 */
const START_AFTER_BYTES = 4 * 1024 * 1024;
/**
 * The worker copies the WAL into the database file once this much has been written since its last copy
 * (a bulk save: about every 100 ms, as the catalog's measured), and at the latest every
 * CHECKPOINT_MAX_INTERVAL_MS. A copy writes each page once, however often it changed: a trickle of small
 * commits (each event's deliveries) rewrites the same few pages, and a copy every 100 ms cost as much CPU
 * as a fifth of a webhook delivery (bench/webhooks.ts); one a second, a fifth of that.
 */
const CHECKPOINT_AFTER_BYTES = 4 * 1024 * 1024;
const CHECKPOINT_MAX_INTERVAL_MS = 1_000;
/** How often the worker looks whether a copy is due. */
const CHECKPOINT_TICK_MS = 100;
/**
 * The writing connection's own automatic checkpoint, kept as a bound on the
 * WAL (about 40 MB with 4 KiB pages) should the worker fall behind. It is
 * SQLite's default (1,000 pages) again once the worker is gone.
 */
const FALLBACK_AUTOCHECKPOINT_PAGES = 10_000;
const SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES = 1_000;

/**
 * Checkpoints a WAL-mode database from a worker thread. SQLite's automatic
 * checkpoint runs inside the COMMIT that crosses 1,000 WAL pages, on the
 * connection that writes: a bulk save (a catalog upload) paid for copying
 * every page twice, and for the file syncs, on the thread that serves
 * requests. With the copy done by a connection of its own on another thread,
 * a catalog first save was 1.17 times as fast (two servers side by side,
 * docs/catalog.md). Checkpoints are PASSIVE: they never wait for the writer or readers.
 */
export class BackgroundCheckpoints {
  /** Bytes still to be written before the worker starts; at or below zero once it has (or has failed to). */
  #bytesBeforeStart = START_AFTER_BYTES;
  #worker?: CheckpointWorker;

  constructor(
    private readonly db: Database.Database,
    private readonly filename: string,
  ) {}

  /** Counts the documents' bytes written; the worker starts once they are worth a thread, and copies once they are worth a copy. */
  noteWritten(bytes: number): void {
    if (this.#bytesBeforeStart <= 0) {
      this.#worker?.noteWritten(bytes);
      return;
    }
    this.#bytesBeforeStart -= bytes;
    if (this.#bytesBeforeStart > 0) return;
    try {
      this.#worker = new CheckpointWorker(this.db, this.filename);
    } catch {
      // The write that got here succeeded: it must not fail for want of a thread. SQLite's own checkpoints go on.
    }
  }

  /** Stops the worker, if it started, before the writing connection closes. */
  async stop(): Promise<void> {
    await this.#worker?.stop();
  }
}

class CheckpointWorker {
  readonly #worker: Worker;
  readonly #exited: Promise<void>;
  #bytesSinceAsked = 0;

  constructor(db: Database.Database, filename: string) {
    this.#worker = new Worker(new URL("./checkpoint-worker.mjs", import.meta.url), {
      workerData: { filename: resolve(filename), tickMs: CHECKPOINT_TICK_MS, maxIntervalMs: CHECKPOINT_MAX_INTERVAL_MS },
      // None of the process's flags: it is plain JavaScript, and a parent's `--import tsx` (tests, benches, start:dev)
      // made each worker load the TypeScript loader too, about 0.2 s of CPU per start instead of under 0.1.
      execArgv: [],
      // Its own heap is a few MiB: keep it there.
      resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2 },
    });
    // Never what keeps a process alive.
    this.#worker.unref();
    db.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
    this.#exited = new Promise((done) => {
      this.#worker.once("exit", () => done());
      // An error ends the worker (then "exit"): the writing connection checkpoints on its own again.
      this.#worker.once("error", () => {
        if (db.open) db.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES}`);
      });
    });
  }

  /** Asks for a copy at the worker's next tick once CHECKPOINT_AFTER_BYTES have been written since the last ask. */
  noteWritten(bytes: number): void {
    this.#bytesSinceAsked += bytes;
    if (this.#bytesSinceAsked < CHECKPOINT_AFTER_BYTES) return;
    this.#bytesSinceAsked = 0;
    this.#worker.postMessage("checkpoint");
  }

  /** Stops the worker and closes its connection, before the writer's: the last connection to close removes the WAL. */
  async stop(): Promise<void> {
    // Awaiting an unreferenced worker's exit would not keep the event loop alive.
    this.#worker.ref();
    this.#worker.postMessage("stop");
    await this.#exited;
  }
}
