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

/**
 * In-process domain events for host apps. A failing listener is logged and
 * never fails the operation that emitted the event.
 */
export class EventBus {
  readonly #handlers = new Map<string, Set<(payload: never) => void | Promise<void>>>();

  constructor(private readonly logger: Logger) {}

  /** Listens to one event; returns the function that stops listening. */
  on<K extends EventName>(name: K, handler: EventHandler<K>): () => void {
    let set = this.#handlers.get(name);
    if (!set) this.#handlers.set(name, (set = new Set()));
    set.add(handler as (payload: never) => void);
    return () => void set.delete(handler as (payload: never) => void);
  }

  /** Calls every listener; resolves when all have settled. Callers need not await it. */
  async emit<K extends EventName>(name: K, payload: ReachkitEvents[K]): Promise<void> {
    const set = this.#handlers.get(name);
    if (!set) return;
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
