import type { Subscription } from "../subscriptions/index.ts";

export type ConsentDecision = { allowed: true } | { allowed: false; reason: "opted_out" | "not_eligible" };

const ALLOWED: ConsentDecision = { allowed: true };

/**
 * Whether an appointment text may go to a phone, from the phone's subscriptions
 * at the company. Checked when the reminder is created (sendEligibleSubscribersOnly)
 * and again before every send, so a STOP in between is honoured.
 *
 * - `sendEligibleSubscribersOnly: true`: only with an active TEXT subscription
 *   (MARKETING or TRANSACTIONAL): the subscriber is eligible (interface 4.15).
 * - `false` (the default): the texts are transactional, answering an appointment
 *   the subscriber booked, so no subscription is needed; but a phone that opted
 *   out of texts at the company (it has TEXT subscriptions and every one of them
 *   is unsubscribed, as a STOP reply leaves them) gets nothing. A pending
 *   (unconfirmed) subscription is no opt-out.
 */
export function textConsent(subscriptions: readonly Subscription[], eligibleOnly: boolean): ConsentDecision {
  const texts = subscriptions.filter((subscription) => subscription.channel === "TEXT");
  if (eligibleOnly) return texts.some((subscription) => subscription.state === "active") ? ALLOWED : { allowed: false, reason: "not_eligible" };
  const optedOut = texts.length > 0 && texts.every((subscription) => subscription.state === "unsubscribed");
  return optedOut ? { allowed: false, reason: "opted_out" } : ALLOWED;
}
