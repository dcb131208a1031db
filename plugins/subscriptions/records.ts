import type { CollectionSpec, Doc } from "../../src/index.ts";
import type { SubscriptionType } from "./sign-up-units.ts";

export const SUBSCRIPTION_CHANNELS = ["TEXT", "EMAIL"] as const;
export type SubscriptionChannel = (typeof SUBSCRIPTION_CHANNELS)[number];

/** pending: a TEXT opt-in waiting for its "Y" reply; active: eligible; unsubscribed: opted out. */
export type SubscriptionState = "pending" | "active" | "unsubscribed";

/**
 * Where a change came from: `api` (the v1 routes), `sms_keyword` (an inbound
 * text), `in_process` (a host app calling the service). Other plugins pass their own.
 */
export type ChangeSource = "api" | "sms_keyword" | "in_process" | (string & {});

/** A subscription's identity as the interface names it. */
export interface SubscriptionKind {
  type: SubscriptionType;
  channel: SubscriptionChannel;
}

export interface CustomIdentifier {
  name: string;
  value: string;
}

/** The user's ids in other systems; wire names of the reference service. */
export interface ExternalIdentifiers {
  clientUserId?: string;
  /** The storefront platform's id of the user. */
  shopifyId?: string;
  /** The marketing platform's id of the user. */
  klaviyoId?: string;
  customIdentifiers?: CustomIdentifier[];
}

export interface Locale {
  /** Two letters, lower case. */
  language: string;
  /** Two letters, upper case. */
  country: string;
}

/** A person known to one company, by E.164 phone and/or email (each unique per company). */
export interface Subscriber extends Doc {
  companyId: string;
  phone?: string;
  /** Lower case. */
  email?: string;
  firstName?: string;
  lastName?: string;
  externalIdentifiers?: ExternalIdentifiers;
  /** The locale of the latest opt-in: the language of the texts they receive. */
  locale?: Locale;
  createdAt: number;
  updatedAt: number;
}

/** One type × channel subscription of a phone (TEXT) or an email (EMAIL). */
export interface Subscription extends Doc, SubscriptionKind {
  companyId: string;
  subscriberId: string;
  /** The phone of a TEXT subscription, the email of an EMAIL one. */
  address: string;
  state: SubscriptionState;
  /** The API sign-up unit of the latest opt-in. */
  signUpUnitId?: string;
  /** When the latest opt-in created or renewed it. */
  subscribedAt: number;
  /** When it last became active. */
  confirmedAt?: number;
  /** When it was last unsubscribed. */
  unsubscribedAt?: number;
  /** The source of the latest state change. */
  source: ChangeSource;
  createdAt: number;
  updatedAt: number;
}

export type ChangeAction =
  /** An opt-in created (or renewed after an unsubscribe) the subscription. */
  | "opt_in"
  /** An opt-in of a subscription that already existed: recorded, nothing else changes (interface 4.4 rule 3). */
  | "opt_in_repeated"
  /** A pending subscription became active ("Y" reply, or a single opt-in). */
  | "confirmed"
  | "unsubscribed"
  /** An unsubscribe of a subscription already unsubscribed (interface 4.6 rule 4). */
  | "unsubscribe_repeated"
  /** START re-activated an unsubscribed subscription. */
  | "resubscribed";

/** The record of every attempt and change: who, what, when, from which source. Ids sort in creation order. */
export interface SubscriptionChange extends Doc {
  /** Names the work that made it (an opt-in request, an inbound text): work that runs twice records once. */
  key: string;
  companyId: string;
  subscriberId?: string;
  subscriptionId?: string;
  type?: SubscriptionType;
  channel: SubscriptionChannel;
  /** The phone or email concerned. */
  address: string;
  action: ChangeAction;
  from?: SubscriptionState;
  to?: SubscriptionState;
  source: ChangeSource;
  signUpUnitId?: string;
  externalIdentifiers?: ExternalIdentifiers;
  locale?: Locale;
  /** The text that triggered a keyword change. */
  keyword?: string;
  at: number;
}

/** Routes inbound texts: the id is the sender number itself, so a number belongs to one company. */
export interface SenderNumberRecord extends Doc {
  companyId: string;
  createdAt: number;
}

/** A company's own wording of one notice in one locale. */
export interface TemplateOverride extends Doc {
  companyId: string;
  locale: string;
  kind: string;
  text: string;
  updatedAt: number;
}

export const SUBSCRIBERS = "subscriptions_subscribers";
export const SUBSCRIPTIONS = "subscriptions_subscriptions";
export const CHANGES = "subscriptions_changes";
export const SENDER_NUMBERS = "subscriptions_sender_numbers";
export const TEMPLATES = "subscriptions_message_templates";

export const subscriptionCollections: readonly CollectionSpec[] = [
  {
    name: SUBSCRIBERS,
    indexes: [
      // Sparse: a subscriber by phone has no email, and most have no email or no phone; each is looked up by value.
      { fields: ["companyId", "phone"], unique: true, sparse: true },
      { fields: ["companyId", "email"], unique: true, sparse: true },
      // The console's list, newest first.
      { fields: ["companyId", "createdAt"] },
    ],
  },
  {
    name: SUBSCRIPTIONS,
    indexes: [
      { fields: ["companyId", "channel", "address", "type"], unique: true },
      { fields: ["companyId", "subscriberId"] },
    ],
  },
  {
    name: CHANGES,
    indexes: [
      { fields: ["key"], unique: true },
      { fields: ["companyId", "address", "at"] },
      { fields: ["companyId", "subscriberId"] },
      // The console's opt-ins and opt-outs per day.
      { fields: ["companyId", "action", "at"] },
    ],
  },
  { name: SENDER_NUMBERS, indexes: [{ fields: ["companyId"] }] },
  { name: TEMPLATES, indexes: [{ fields: ["companyId"] }] },
];
