import type { EventBus } from "../../src/index.ts";
import type { ChangeSource, Subscription, SubscriptionChannel, SubscriptionState } from "./records.ts";
import type { SubscriptionType } from "./sign-up-units.ts";

/** What the subscription events carry. */
export interface SubscriptionEvent {
  companyId: string;
  subscriptionId: string;
  subscriberId: string;
  type: SubscriptionType;
  channel: SubscriptionChannel;
  /** The phone (TEXT) or email (EMAIL). */
  address: string;
  /** The state after the change. */
  state: SubscriptionState;
  /** The state before; absent for a new subscription. */
  previousState?: SubscriptionState;
  source: ChangeSource;
  at: number;
}

declare module "../../src/events/event-bus.ts" {
  interface ReachkitEvents {
    /** An opt-in created a subscription, renewed an unsubscribed one, or START re-activated one (state pending or active). */
    "subscription.created": SubscriptionEvent;
    /** A pending subscription became active (a "Y" reply, or a single opt-in of a pending one). */
    "subscription.confirmed": SubscriptionEvent;
    "subscription.unsubscribed": SubscriptionEvent;
  }
}

export type SubscriptionEventName = "subscription.created" | "subscription.confirmed" | "subscription.unsubscribed";

/** An event of a change, emitted at the end of the change's transaction. */
export interface PendingEvent {
  name: SubscriptionEventName;
  payload: SubscriptionEvent;
}

export function subscriptionEvent(
  name: SubscriptionEventName,
  subscription: Subscription,
  previousState: SubscriptionState | undefined,
  at: number,
): PendingEvent {
  return {
    name,
    payload: {
      companyId: subscription.companyId,
      subscriptionId: subscription.id,
      subscriberId: subscription.subscriberId,
      type: subscription.type,
      channel: subscription.channel,
      address: subscription.address,
      state: subscription.state,
      ...(previousState !== undefined ? { previousState } : {}),
      source: subscription.source,
      at,
    },
  };
}

/**
 * Emits the events of a change, inside its transaction: in-transaction
 * listeners (webhook deliveries, journeys) commit with it, the others run after the commit.
 */
export async function emitAll(events: EventBus, pending: readonly PendingEvent[]): Promise<void> {
  for (const event of pending) await events.emit(event.name, event.payload);
}
