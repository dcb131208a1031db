import type { EventBus } from "../../src/events/event-bus.ts";
import type { SubscriptionChannel } from "./records.ts";
import type { UserRef } from "./schemas.ts";
import type { PendingEvent } from "./subscription-events.ts";

/** A phone makes TEXT subscriptions, an email EMAIL ones. */
export function channelsOf(user: UserRef): SubscriptionChannel[] {
  const channels: SubscriptionChannel[] = [];
  if (user.phone !== undefined) channels.push("TEXT");
  if (user.email !== undefined) channels.push("EMAIL");
  return channels;
}

/** The address of a channel; callers ask only for channels the user has. */
export function addressOf(user: UserRef, channel: SubscriptionChannel): string {
  return (channel === "TEXT" ? user.phone : user.email)!;
}

/** Emits events once the transaction that caused them has committed. */
export async function emitAll(events: EventBus, pending: readonly PendingEvent[]): Promise<void> {
  for (const event of pending) await events.emit(event.name, event.payload);
}
