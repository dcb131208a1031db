export { subscriptionsPlugin, SIGN_UP_UNITS_SERVICE, type SubscriptionsApi } from "./subscriptions-plugin.ts";
export { SignUpUnits, SUBSCRIPTION_TYPES, type SignUpUnit, type SubscriptionType, type NewSignUpUnit } from "./sign-up-units.ts";
