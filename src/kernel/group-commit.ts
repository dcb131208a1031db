/** What one caller writes in a group, and how it learns the outcome. */
interface Member {
  write: () => Promise<unknown>;
  settle: (outcome: { ok: true; value: unknown } | { ok: false; error: unknown }) => void;
}

/**
 * Small writes of callers that run at the same time, committed together: each
 * caller's write joins the next group, and one storage transaction writes the
 * whole group (each member in a savepoint of its own, so a failing write undoes
 * only its own). A commit costs far more than a small update, so deliveries
 * answered together cost one commit instead of one each.
 *
 * Only for callers outside a transaction: a caller inside one would wait for a
 * group that waits for the caller's transaction to end.
 */
export class GroupCommit {
  #next: Member[] = [];
  #flushing: Promise<void> | undefined;

  constructor(
    private readonly atomically: <R>(work: () => Promise<R>) => Promise<R>,
    /** How many callers may join the next group: once all have, it need not wait for more. */
    private readonly participants: () => number,
  ) {}

  /** Writes `write` in the next group; resolves with its result once the group committed. */
  run<W>(write: () => Promise<W>): Promise<W> {
    return new Promise((resolve, reject) => {
      this.#next.push({ write, settle: (outcome) => (outcome.ok ? resolve(outcome.value as W) : reject(outcome.error)) });
      this.#schedule();
    });
  }

  /** A caller that could have joined will not (it ended without writing): the group may be complete. */
  left(): void {
    if (this.#next.length > 0) this.#schedule();
  }

  #schedule(): void {
    if (this.#flushing) return;
    // Once every caller that may join has, at once; else after the callers of this turn of the event loop.
    const complete = this.#next.length >= this.participants();
    this.#flushing = new Promise<void>((done) => (complete ? queueMicrotask(done) : setImmediate(done))).then(() => this.#flush());
  }

  async #flush(): Promise<void> {
    while (this.#next.length > 0) {
      const group = this.#next;
      this.#next = [];
      const written: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
      try {
        await this.atomically(async () => {
          for (const member of group) {
            try {
              // A savepoint: a write that fails undoes its own writes only.
              written.push({ ok: true, value: await this.atomically(member.write) });
            } catch (error) {
              written.push({ ok: false, error });
            }
          }
        });
      } catch (error) {
        // The commit failed: nothing of the group was stored.
        for (const member of group) member.settle({ ok: false, error });
        continue;
      }
      group.forEach((member, index) => member.settle(written[index]!));
    }
    this.#flushing = undefined;
  }
}
