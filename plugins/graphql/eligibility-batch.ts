import type { SubscriptionEligibility, UserRef } from "../subscriptions/index.ts";

interface Waiting {
  user: UserRef;
  resolve(value: SubscriptionEligibility[]): void;
  reject(error: unknown): void;
}

/**
 * Collects the users a query asks for while graphql-js walks the aliases (it
 * resolves them all in one synchronous pass) and looks them up together once
 * that pass ends: a 50-alias query is one lookup, not fifty.
 */
export class EligibilityBatch {
  #waiting: Waiting[] = [];

  constructor(private readonly lookup: (users: readonly UserRef[]) => Promise<SubscriptionEligibility[][]>) {}

  load(user: UserRef): Promise<SubscriptionEligibility[]> {
    return new Promise((resolve, reject) => {
      if (this.#waiting.push({ user, resolve, reject }) === 1) queueMicrotask(() => this.#flush());
    });
  }

  #flush(): void {
    const batch = this.#waiting;
    this.#waiting = [];
    this.lookup(batch.map((waiting) => waiting.user)).then(
      (results) => batch.forEach((waiting, index) => waiting.resolve(results[index]!)),
      (error: unknown) => batch.forEach((waiting) => waiting.reject(error)),
    );
  }
}
