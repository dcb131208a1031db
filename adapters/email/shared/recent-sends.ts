/**
 * The provider ids of the most recent sends by idempotency key, so a send
 * repeated in this process returns the first one's answer instead of
 * delivering again. Bounded: the oldest keys go first, and a crash forgets
 * them all (the outbox's in-flight mark covers that case).
 * Internal to the email adapters: not exported from their index files.
 */
export class RecentSends {
  readonly #ids = new Map<string, string>();

  constructor(private readonly capacity = 10_000) {}

  get(key: string): string | undefined {
    return this.#ids.get(key);
  }

  remember(key: string, providerMessageId: string): void {
    this.#ids.set(key, providerMessageId);
    if (this.#ids.size > this.capacity) this.#ids.delete(this.#ids.keys().next().value!);
  }
}
