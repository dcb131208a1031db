/** What one caller wrote in a group, and what it runs once the group committed. */
interface Member {
  write: () => Promise<unknown>;
  afterCommit: (written: unknown) => unknown;
  settle: (outcome: { ok: true; value: unknown } | { ok: false; error: unknown }) => void;
}

/**
 * Small writes of callers that run at the same time, committed together: each
 * caller's write joins the next group, and one storage transaction writes the
 * whole group (each member in a savepoint of its own, so a failing write undoes
 * only its own). A commit costs far more than a small update, so a hundred
 * deliveries finishing together cost one commit instead of a hundred.
 *
 * Groups commit one after another, and after each commit its members'
 * `afterCommit` run in the order they joined: what must follow the commit in
 * order (texts handed to their senders) keeps the order of the writes.
 *
 * Only for callers outside a transaction: a caller inside one would wait for a
 * group that waits for the caller's transaction to end.
 */
export class GroupCommit {
  #next: Member[] = [];
  #flushing: Promise<void> | undefined;

  constructor(private readonly atomically: <R>(work: () => Promise<R>) => Promise<R>) {}

  /** Writes `write` in the next group; once it committed, returns what `afterCommit` makes of its result. */
  run<W, R = W>(write: () => Promise<W>, afterCommit: (written: W) => R = (written) => written as unknown as R): Promise<Awaited<R>> {
    return new Promise((resolve, reject) => {
      this.#next.push({
        write,
        afterCommit: afterCommit as (written: unknown) => unknown,
        settle: (outcome) => (outcome.ok ? resolve(outcome.value as Awaited<R>) : reject(outcome.error)),
      });
      // Flushed once the callers of this turn of the event loop have joined.
      this.#flushing ??= new Promise<void>((done) => setImmediate(done)).then(() => this.#flush());
    });
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
      group.forEach((member, index) => {
        const outcome = written[index]!;
        if (!outcome.ok) return member.settle(outcome);
        try {
          member.settle({ ok: true, value: member.afterCommit(outcome.value) });
        } catch (error) {
          member.settle({ ok: false, error });
        }
      });
    }
    this.#flushing = undefined;
  }
}
