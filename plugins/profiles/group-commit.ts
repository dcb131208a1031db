import { inject, injectable, STORAGE, type Storage } from "../../src/index.ts";

interface Waiting {
  work: () => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Group commit for the hottest write, events posted over HTTP: the writes that
 * ask during one event-loop turn commit together on the next, each in a
 * savepoint of its own (a nested transaction). A write that throws rolls back
 * alone and its caller gets its error; the others commit; each caller is
 * answered only once the shared commit is done, so nothing acknowledged can
 * be lost. What a transaction costs besides its writes (the storage's lock,
 * BEGIN and COMMIT, the pages written to SQLite's WAL) is then paid once per
 * turn rather than once per event.
 *
 * Only for callers outside any transaction (a route handler): the shared
 * transaction begins later, in another async context, so a caller inside its
 * own transaction would wait for it forever.
 */
@injectable()
export class GroupCommit {
  #waiting: Waiting[] = [];
  readonly #commitWaiting = () => void this.#commit(this.#waiting.splice(0));

  constructor(@inject(STORAGE) private readonly storage: Storage) {}

  /** Runs `work` in the next shared transaction; resolves with its result once that transaction committed. */
  run<R>(work: () => Promise<R>): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      if (this.#waiting.push({ work, resolve: resolve as (value: unknown) => void, reject }) === 1) setImmediate(this.#commitWaiting);
    });
  }

  async #commit(batch: readonly Waiting[]): Promise<void> {
    if (batch.length === 1) {
      const [only] = batch;
      return this.storage.transaction(only!.work).then(only!.resolve, only!.reject);
    }
    const outcomes: Outcome[] = [];
    try {
      await this.storage.transaction(async () => {
        for (const { work } of batch) {
          try {
            outcomes.push({ ok: true, value: await this.storage.transaction(work) });
          } catch (error) {
            outcomes.push({ ok: false, error });
          }
        }
      });
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
      return;
    }
    batch.forEach((waiting, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) waiting.resolve(outcome.value);
      else waiting.reject(outcome.error);
    });
  }
}
