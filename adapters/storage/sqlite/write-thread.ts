import { resolve } from "node:path";
import { Worker } from "node:worker_threads";
import Database from "better-sqlite3";

/** A statement of a detached write, with its parameters: what crosses to the thread. */
export interface ThreadStatement {
  sql: string;
  params: unknown[];
}

/** What the thread needs of the storage whose file it writes (sqlite-storage.ts). */
export interface WriteThreadHost {
  /** Runs the write of a group with the storage's own writes and transactions held back (AmbientTransactions.aside). */
  aside<R>(work: () => Promise<R>): Promise<R>;
  /** Called once the thread has committed a group, before its callers learn it: what reads begin after must see it. */
  committedElsewhere(): void;
}

interface Call {
  statements: ThreadStatement[];
  resolve: (changes: number) => void;
  reject: (error: unknown) => void;
}

/** How a call failed on the thread: an error's message and SQLite code (its class does not cross threads). */
interface Failure {
  message: string;
  code?: string;
}

/** The most calls of one commit: a commit's callers wait for its last statement. */
const CALLS_PER_COMMIT = 256;
/** The thread's own bound on the WAL, as the writing connection keeps one (checkpointer.ts): copies are BackgroundCheckpoints' work. */
const AUTOCHECKPOINT_PAGES = 10_000;

/**
 * Detached writes (`updateEach` with `detached`) made by a worker thread on a connection of its own. A webhook
 * delivery's outcome (an UPDATE of its ~600-byte document, and its share of a COMMIT) was the costliest SQLite
 * work on the event loop of a busy server; the thread takes it to the other core. Calls are written in the order
 * they came, those that came while a commit was under way in the next one, each call's failure its own (the
 * thread writes a failed group's calls again one by one). While the thread writes, the storage's own
 * connection holds back its writes and transactions (not its reads): it never waits in SQLite's busy handler,
 * which would block the event loop, and what it writes after a caller was answered lands after that caller's
 * rows. Callers are answered once their commit is done, and after the storage's read batch has ended, so a
 * read begun after sees the rows.
 *
 * The thread starts with the first detached write (about 0.1 s, which that write waits). Should it fail, the
 * calls it holds reject and `failed` is set: the storage writes detached writes itself from then on.
 */
export class WriteThread {
  readonly #worker: Worker;
  readonly #host: WriteThreadHost;
  readonly #ready: Promise<void>;
  readonly #exited: Promise<void>;
  #queue: Call[] = [];
  /** Whether a group is being written (from the moment it waits for its turn until its callers are answered). */
  #writing = false;
  /** Where the thread's answer to the group it writes goes. */
  #answer: { resolve: (results: ReadonlyArray<number | Failure>) => void; reject: (error: unknown) => void } | undefined;
  #failure: Error | undefined;
  #whenIdle: Array<() => void> = [];

  constructor(filename: string, host: WriteThreadHost, cacheKiB: number | undefined) {
    this.#host = host;
    this.#worker = new Worker(new URL("./write-thread-worker.mjs", import.meta.url), {
      workerData: { filename: resolve(filename), cacheKiB, autocheckpointPages: AUTOCHECKPOINT_PAGES },
      // None of the process's flags (see checkpointer.ts): a parent's `--import tsx` would load the TypeScript loader in the thread too.
      execArgv: [],
    });
    this.#worker.unref();
    let ready!: () => void;
    this.#ready = new Promise((resolve, reject) => {
      ready = resolve;
      this.#worker.once("error", reject);
    });
    // Awaited by the first group; a failure before then is that group's.
    this.#ready.catch(() => {});
    this.#worker.on("message", (message: "ready" | ReadonlyArray<number | Failure>) => {
      if (message === "ready") ready();
      else this.#answer?.resolve(message);
    });
    this.#worker.on("error", (error) => this.#fail(error));
    this.#exited = new Promise((done) =>
      this.#worker.once("exit", () => {
        this.#fail(new Error("the sqlite write thread stopped"));
        done();
      }),
    );
  }

  /** Whether the thread has failed: detached writes are then the storage's own. */
  get failed(): boolean {
    return this.#failure !== undefined;
  }

  /** Writes `statements` in a commit of the thread's; resolves with the rows they changed once it is done. */
  write(statements: ThreadStatement[]): Promise<number> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      this.#queue.push({ statements, resolve, reject });
      if (!this.#writing) void this.#writeGroup();
    });
  }

  /** Waits for every call asked so far, then stops the thread and closes its connection (before the storage's own: the last to close removes the WAL). */
  async stop(): Promise<void> {
    while (this.#writing) await new Promise<void>((idle) => this.#whenIdle.push(idle));
    // Awaiting an unreferenced worker's exit would not keep the event loop alive (nor would a failed one's, still ending).
    this.#worker.ref();
    if (this.#failure === undefined) this.#worker.postMessage("stop");
    await this.#exited;
  }

  async #writeGroup(): Promise<void> {
    this.#writing = true;
    // Callers wait: the thread keeps the process alive until they are answered (its start included).
    this.#worker.ref();
    let group: Call[] = [];
    try {
      await this.#ready;
      await this.#host.aside(async () => {
        // Taken once the turn is the thread's: calls asked while it waited join the group.
        group = this.#queue.splice(0, CALLS_PER_COMMIT);
        const results = await this.#send(group);
        this.#host.committedElsewhere();
        for (let index = 0; index < group.length; index++) {
          const result = results[index]!;
          if (typeof result === "number") group[index]!.resolve(result);
          else group[index]!.reject(new Database.SqliteError(result.message, result.code ?? "SQLITE_ERROR"));
        }
      });
    } catch (error) {
      this.#fail(error);
      for (const call of group) call.reject(error);
    } finally {
      this.#writing = false;
      this.#worker.unref();
      if (this.#queue.length > 0) void this.#writeGroup();
      else for (const idle of this.#whenIdle.splice(0)) idle();
    }
  }

  #send(group: readonly Call[]): Promise<ReadonlyArray<number | Failure>> {
    return new Promise((resolve, reject) => {
      this.#answer = { resolve, reject };
      this.#worker.postMessage({ calls: group.map((call) => call.statements) });
    }).finally(() => {
      this.#answer = undefined;
    }) as Promise<ReadonlyArray<number | Failure>>;
  }

  /** The thread is gone or unusable: what it holds rejects, and nothing more is sent to it. */
  #fail(error: unknown): void {
    this.#failure ??= error instanceof Error ? error : new Error(String(error));
    this.#answer?.reject(this.#failure);
    for (const call of this.#queue.splice(0)) call.reject(this.#failure);
  }
}
