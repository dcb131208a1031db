/**
 * A fenced write (`update(id, patch, { where })` naming what the caller read)
 * matched nothing: another transaction changed or removed the document since
 * it was read, and committed. On a storage whose transactions run side by side
 * (`transactionsRunConcurrently`, PostgreSQL) the caller's decision rests on a
 * stale read; thrown so that its transaction rolls back whole and runs again
 * on what is stored now (`retryConcurrentChanges`, or a job's next attempt).
 */
export class ConcurrentChangeError extends Error {
  constructor(what: string) {
    super(`${what} was changed by another transaction since it was read`);
    this.name = "ConcurrentChangeError";
  }
}

/** Attempts of `retryConcurrentChanges`: each retry follows a commit of another writer, so a few suffice. */
const ATTEMPTS = 5;

/**
 * Runs `transaction` (a `storage.transaction(...)` of work that only reads
 * and writes the storage, so it is safe to run again) and runs it again while
 * it fails with {@link ConcurrentChangeError}, up to five times in all.
 */
export async function retryConcurrentChanges<R>(transaction: () => Promise<R>): Promise<R> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction();
    } catch (error) {
      if (!(error instanceof ConcurrentChangeError) || attempt >= ATTEMPTS) throw error;
    }
  }
}
