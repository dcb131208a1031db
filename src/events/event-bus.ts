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
 * In-process domain events. Plugins emit an event inside the storage
 * transaction of the change that caused it, and the bus has two kinds of
 * listeners:
 *
 * - `on`: runs once that transaction has committed (at once when the event is
 *   emitted outside one), never when it rolls back. A failing listener is
 *   logged and never fails the operation. For host apps, and for work that may
 *   be slow or talk to other systems.
 * - `onInTransaction`: for a reaction that must never be lost. It runs inside
 *   the change's transaction, so its writes (the durable job it enqueues)
 *   commit with the change or not at all: a crash cannot leave the change
 *   without its reaction. A failing listener fails the change. It must be
 *   quick and touch only the kit's storage: the storage waits for it. The
 *   webhooks and journeys plugins listen this way.
 */
export class EventBus {
  readonly #handlers = new Map<string, Set<AnyHandler>>();
  readonly #inTransaction = new Map<string, Set<AnyHandler>>();

  constructor(
    private readonly logger: Logger,
    /** The storage's `afterCommit`: without one, `on` listeners run when the event is emitted. */
    private readonly afterCommit?: (work: () => unknown) => Promise<void>,
  ) {}

  /** Listens to one event once its change has committed; returns the function that stops listening. */
  on<K extends EventName>(name: K, handler: EventHandler<K>): () => void {
    return listen(this.#handlers, name, handler as AnyHandler);
  }

  /** Listens to one event inside the change's storage transaction (see the class); returns the function that stops listening. */
  onInTransaction<K extends EventName>(name: K, handler: EventHandler<K>): () => void {
    return listen(this.#inTransaction, name, handler as AnyHandler);
  }

  /**
   * Emits an event; call it inside the transaction of the change that caused
   * it. Runs the in-transaction listeners in turn (rejects if one fails), then
   * hands the others to the storage to run after the commit. Resolves when the
   * in-transaction listeners are done, and, outside a transaction, the others too.
   */
  async emit<K extends EventName>(name: K, payload: ReachkitEvents[K]): Promise<void> {
    for (const handler of this.#inTransaction.get(name) ?? []) await (handler as EventHandler<K>)(payload);
    const set = this.#handlers.get(name);
    if (!set || set.size === 0) return;
    const listeners = [...set] as EventHandler<K>[];
    const run = () =>
      Promise.all(
        listeners.map(async (handler) => {
          try {
            await handler(payload);
          } catch (error) {
            this.logger.error("event listener failed", { event: name, error });
          }
        }),
      );
    await (this.afterCommit ? this.afterCommit(run) : run());
  }
}

function listen(table: Map<string, Set<AnyHandler>>, name: string, handler: AnyHandler): () => void {
  let set = table.get(name);
  if (!set) table.set(name, (set = new Set()));
  set.add(handler);
  return () => void set.delete(handler);
}
