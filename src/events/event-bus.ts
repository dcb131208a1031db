import type { Logger } from "../ports/logger.ts";

/**
 * The domain events of a kit, by name. Plugins add theirs by declaration merging:
 *
 * ```ts
 * declare module "reachkit" {
 *   interface ReachkitEvents { "subscription.created": SubscriptionEvent }
 * }
 * ```
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface ReachkitEvents {}

export type EventName = keyof ReachkitEvents & string;
export type EventHandler<K extends EventName> = (payload: ReachkitEvents[K]) => void | Promise<void>;

type AnyHandler = (payload: never) => void | Promise<void>;

/**
 * In-process domain events, with two kinds of listeners:
 *
 * - `on`: for host apps and for work that may be slow. A failing listener is
 *   logged and never fails the operation that emitted the event.
 * - `onInTransaction`: for a reaction that must never be lost. The profiles,
 *   subscriptions and catalog plugins emit their events inside the storage
 *   transaction of the change that caused them, so such a listener's writes
 *   (the durable job it enqueues) commit with the change or not at all: a
 *   crash cannot leave the change without its reaction. A failing listener
 *   fails the change. It must be quick and touch only the kit's storage: the
 *   storage waits for it. The journeys plugin listens this way.
 */
export class EventBus {
  readonly #handlers = new Map<string, Set<AnyHandler>>();
  readonly #inTransaction = new Map<string, Set<AnyHandler>>();

  constructor(private readonly logger: Logger) {}

  /** Listens to one event; returns the function that stops listening. */
  on<K extends EventName>(name: K, handler: EventHandler<K>): () => void {
    return listen(this.#handlers, name, handler as AnyHandler);
  }

  /** Listens to one event inside the change's storage transaction (see the class); returns the function that stops listening. */
  onInTransaction<K extends EventName>(name: K, handler: EventHandler<K>): () => void {
    return listen(this.#inTransaction, name, handler as AnyHandler);
  }

  /**
   * Runs the in-transaction listeners in turn (rejects when one fails), then
   * every other listener; resolves when all have settled.
   */
  async emit<K extends EventName>(name: K, payload: ReachkitEvents[K]): Promise<void> {
    for (const handler of this.#inTransaction.get(name) ?? []) await (handler as EventHandler<K>)(payload);
    const set = this.#handlers.get(name);
    if (!set || set.size === 0) return;
    await Promise.all(
      [...set].map(async (handler) => {
        try {
          await (handler as EventHandler<K>)(payload);
        } catch (error) {
          this.logger.error("event listener failed", { event: name, error });
        }
      }),
    );
  }
}

function listen(table: Map<string, Set<AnyHandler>>, name: string, handler: AnyHandler): () => void {
  let set = table.get(name);
  if (!set) table.set(name, (set = new Set()));
  set.add(handler);
  return () => void set.delete(handler);
}
