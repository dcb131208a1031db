import type { SubscriptionChannel } from "./records.ts";
import type { UserRef } from "./schemas.ts";

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
