export { subscriptionsPlugin, DEFAULT_REPEAT_TEXT_WINDOW_MS, type SubscriptionsApi, type SubscriptionsPluginOptions } from "./subscriptions-plugin.ts";
export { SIGN_UP_UNITS_SERVICE, SUBSCRIPTIONS_SERVICE, EMAIL_LINKS } from "./tokens.ts";
export { SubscriptionsService, type ProvisionedMessaging } from "./subscriptions-service.ts";
export { SubscriberDirectory, MAX_SUBSCRIBER_PAGE, type SubscriberPage, type SubscriberPageQuery, type DailyChanges } from "./subscriber-directory.ts";
export { SignUpUnits, SUBSCRIPTION_TYPES, type SignUpUnit, type SubscriptionType, type NewSignUpUnit } from "./sign-up-units.ts";
export {
  SUBSCRIPTION_CHANNELS,
  type SubscriptionChannel,
  type SubscriptionState,
  type SubscriptionKind,
  type ChangeSource,
  type ChangeAction,
  type Subscriber,
  type Subscription,
  type SubscriptionChange,
  type ExternalIdentifiers,
  type CustomIdentifier,
  type Locale,
  type SenderNumberRecord,
  type TemplateOverride,
} from "./records.ts";
export type { Eligibility, IneligibilityReason, SubscriptionEligibility } from "./eligibility.ts";
export type { OptInAccepted, OptInApplied, OptInOptions, OptInUser, CreationStatus, OptInJob } from "./opt-ins.ts";
export type { UnsubscribeAccepted, UnsubscribeApplied, UnsubscribeOptions, UnsubscribeStatus, UnsubscribeJob } from "./unsubscribes.ts";
export type { OptInRequest, OptInUserInput, ExternalIdentifiersInput, UnsubscribeRequest, UserRef } from "./schemas.ts";
export { E164 } from "./schemas.ts";
export { readPhoneNumber, type PhoneNumber } from "./phone-numbers.ts";
export { keywordOf, type KeywordAction, type InboundText, type InboundResult, type InboundMessageEvent } from "./inbound-texts.ts";
export { SenderNumbers, SenderNumberTakenError, normalizeSenderNumber, fictitiousSenderNumber, INBOUND_PATH } from "./sender-numbers.ts";
export {
  NoticeTemplates,
  DEFAULT_TEMPLATES,
  NOTICE_KINDS,
  NOTICE_LOCALES,
  MAX_TEMPLATE_LENGTH,
  noticeLocale,
  renderTemplate,
  type NoticeKind,
  type NoticeLocale,
  type NoticeValues,
} from "./notice-templates.ts";
export type { SubscriptionEvent, SubscriptionEventName } from "./subscription-events.ts";
export {
  EmailLinks,
  CONFIRM_EMAIL_PATH,
  UNSUBSCRIBE_EMAIL_PATH,
  DEFAULT_EMAIL_CONFIRMATION_TTL_MS,
  type EmailLinkClaims,
  type EmailLinkCheck,
  type EmailLinkPurpose,
} from "./email-links.ts";
export { SubscriptionEmails, type SubscriberEmail } from "./subscription-emails.ts";
export type { SubscriptionStore, ChangeInput, NewSubscriptionFields } from "./subscription-store.ts";
