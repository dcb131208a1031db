import type { Subscription, SubscriptionKind, SubscriptionState } from "./records.ts";

/**
 * Why a subscription cannot receive messages (the GraphQL enum carries them
 * prefixed `INELIGIBILITY_REASON_`). NOT_SUBSCRIBED is for in-process checks of
 * a type and channel the user has no subscription of.
 */
export type IneligibilityReason = "OPTED_OUT" | "NOT_FULLY_OPTED_IN" | "NOT_SUBSCRIBED";

export interface Eligibility {
  /** True only for an active subscription. */
  isEligible: boolean;
  ineligibilityReason?: IneligibilityReason;
}

export interface SubscriptionEligibility {
  subscription: SubscriptionKind;
  eligibility: Eligibility;
}

const BY_STATE: Readonly<Record<SubscriptionState, Eligibility>> = {
  active: { isEligible: true },
  pending: { isEligible: false, ineligibilityReason: "NOT_FULLY_OPTED_IN" },
  unsubscribed: { isEligible: false, ineligibilityReason: "OPTED_OUT" },
};

export const NOT_SUBSCRIBED: Eligibility = { isEligible: false, ineligibilityReason: "NOT_SUBSCRIBED" };

export function eligibilityOf(subscription: Subscription): SubscriptionEligibility {
  return { subscription: { type: subscription.type, channel: subscription.channel }, eligibility: { ...BY_STATE[subscription.state] } };
}
