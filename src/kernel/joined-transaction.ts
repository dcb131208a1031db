import type { Storage } from "../ports/storage.ts";

/**
 * Runs `work` in the caller's transaction when there is one (no savepoint of its own), else in a transaction of
 * its own: for writes that must commit together and may be asked from inside a change's transaction or outside any.
 */
export function inJoinedTransaction<R>(storage: Storage, work: () => Promise<R>): Promise<R> {
  return storage.inTransaction?.() ? work() : storage.transaction(work);
}
