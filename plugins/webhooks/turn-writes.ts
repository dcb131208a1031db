import { inject, injectable, STORAGE, type Storage } from "../../src/index.ts";

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * The drains' writes asked in one turn of the event loop (in-flight marks, outcomes), committed in one
 * transaction, one after another, without a savepoint each: a savepoint makes SQLite copy every page
 * its writes touch, which cost about as much again as the write itself. Each write is one statement,
 * or a few whose partial effect is harmless (a webhook marked failing whose delivery's outcome then
 * failed: the delivery is tried again when due). A write that throws fails its caller alone; a commit
 * that fails fails every caller of the group, and their deliveries are due again when their in-flight
 * marks say. With transactions side by side (PostgreSQL) each write is a transaction of its own, at once.
 */
@injectable()
export class TurnWrites {
  #next: Array<{ write: () => Promise<unknown>; settle: (settled: Settled) => void }> = [];

  constructor(@inject(STORAGE) private readonly storage: Storage) {}

  run<R>(write: () => Promise<R>): Promise<R> {
    if (this.storage.transactionsRunConcurrently) return this.storage.transaction(write);
    return new Promise<R>((resolve, reject) => {
      if (this.#next.length === 0) setImmediate(() => void this.#commit());
      this.#next.push({ write, settle: (settled) => (settled.ok ? resolve(settled.value as R) : reject(settled.error)) });
    });
  }

  async #commit(): Promise<void> {
    const group = this.#next;
    this.#next = [];
    const settled: Settled[] = [];
    try {
      await this.storage.transaction(async () => {
        for (const { write } of group) settled.push(await write().then((value): Settled => ({ ok: true, value }), (error: unknown): Settled => ({ ok: false, error })));
      });
    } catch (error) {
      for (const member of group) member.settle({ ok: false, error });
      return;
    }
    group.forEach((member, index) => member.settle(settled[index]!));
  }
}
