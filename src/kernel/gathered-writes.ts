/**
 * Items written together outside any transaction: those asked within `gatherMs` of the first (or until
 * `maxItems` are), handed to one call of `writeAll`, which commits on its own (the webhook delivery outcomes:
 * a few hundred at full speed in one transaction of a few statements, where each alone was a statement and a
 * commit). Each caller is answered once that call is done. Should it throw, each item is written again alone,
 * so that one item's failure stays its own. The gathering timer keeps the process alive: items asked while
 * the kit stops are still written.
 *
 * For items a caller waits on but that need no transaction of the caller's: inside one, a GroupCommit's
 * `runBatched` shares the group's transaction instead.
 */
export class GatheredWrites<T> {
  #items: T[] = [];
  #callers: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];
  #timer: NodeJS.Timeout | undefined;
  readonly #writeNow = () => this.#write();

  constructor(
    private readonly writeAll: (items: readonly T[]) => Promise<unknown>,
    private readonly gatherMs: number,
    private readonly maxItems = 256,
  ) {
    if (!Number.isFinite(gatherMs) || gatherMs < 0) throw new RangeError(`GatheredWrites: gatherMs must be a finite number of at least 0, got ${String(gatherMs)}`);
    if (!Number.isSafeInteger(maxItems) || maxItems < 1) throw new RangeError(`GatheredWrites: maxItems must be a whole number of at least 1, got ${String(maxItems)}`);
  }

  /** Writes `item` with the others asked within `gatherMs`; resolves once they are written. */
  write(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#items.push(item);
      this.#callers.push({ resolve, reject });
      if (this.#items.length >= this.maxItems) this.#write();
      else this.#timer ??= setTimeout(this.#writeNow, this.gatherMs);
    });
  }

  #write(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const items = this.#items;
    const callers = this.#callers;
    this.#items = [];
    this.#callers = [];
    this.#writeAll(items).then(
      () => {
        for (const caller of callers) caller.resolve();
      },
      (error: unknown) => {
        if (items.length === 1) callers[0]!.reject(error);
        else for (let index = 0; index < items.length; index++) this.#writeAll([items[index]!]).then(callers[index]!.resolve, callers[index]!.reject);
      },
    );
  }

  /** `writeAll`, whose synchronous throw is its promise's rejection (it runs from a timer). */
  #writeAll(items: readonly T[]): Promise<unknown> {
    try {
      return this.writeAll(items);
    } catch (error) {
      return Promise.reject(error);
    }
  }
}
