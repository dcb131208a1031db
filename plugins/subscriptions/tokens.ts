import { defineToken } from "../../src/index.ts";
import type { Identifier } from "../profiles/index.ts";
import type { EmailLinks } from "./email-links.ts";
import type { InboundTexts } from "./inbound-texts.ts";
import type { NoticeTemplates } from "./notice-templates.ts";
import type { Notices } from "./notices.ts";
import type { OptInBatch } from "./opt-in-batch.ts";
import type { OptIns } from "./opt-ins.ts";
import type { SenderNumbers } from "./sender-numbers.ts";
import type { SignUpUnits } from "./sign-up-units.ts";
import type { SubscriberDirectory } from "./subscriber-directory.ts";
import type { SubscriptionEmails } from "./subscription-emails.ts";
import type { SubscriptionStore } from "./subscription-store.ts";
import type { SubscriptionsPluginOptions } from "./subscriptions-plugin.ts";
import type { SubscriptionsService } from "./subscriptions-service.ts";
import type { Unsubscribes } from "./unsubscribes.ts";

const PROVIDER = "reachkit/plugins/subscriptions (subscriptionsPlugin)";
export const SIGN_UP_UNITS_SERVICE = defineToken<SignUpUnits>("SignUpUnits", [PROVIDER]);
/** The subscriptions service, for other plugins (`requires: [SUBSCRIPTIONS_SERVICE]`, then `resolve`). */
export const SUBSCRIPTIONS_SERVICE = defineToken<SubscriptionsService>("SubscriptionsService", [PROVIDER]);

/** The plugin's options, defaults applied. */
export const SUBSCRIPTIONS_SETTINGS = defineToken<Required<SubscriptionsPluginOptions>>("SubscriptionsSettings", [PROVIDER]);
export const SENDER_NUMBERS_SERVICE = defineToken<SenderNumbers>("SenderNumbers", [PROVIDER]);
export const NOTICE_TEMPLATES = defineToken<NoticeTemplates>("NoticeTemplates", [PROVIDER]);
export const NOTICES = defineToken<Notices>("Notices", [PROVIDER]);
export const SUBSCRIPTION_STORE = defineToken<SubscriptionStore>("SubscriptionStore", [PROVIDER]);
export const OPT_INS = defineToken<OptIns>("OptIns", [PROVIDER]);
/** Writes the fresh opt-ins and repeats of a batch of opt-in jobs together. */
export const OPT_IN_BATCH = defineToken<OptInBatch>("OptInBatch", [PROVIDER]);
export const UNSUBSCRIBES = defineToken<Unsubscribes>("Unsubscribes", [PROVIDER]);
export const INBOUND_TEXTS = defineToken<InboundTexts>("InboundTexts", [PROVIDER]);
export const SUBSCRIBER_DIRECTORY = defineToken<SubscriberDirectory>("SubscriberDirectory", [PROVIDER]);
/** Makes and checks the signed links of the plugin's emails (confirmation, one-click unsubscribe). */
export const EMAIL_LINKS = defineToken<EmailLinks>("EmailLinks", [PROVIDER]);
export const SUBSCRIPTION_EMAILS = defineToken<SubscriptionEmails>("SubscriptionEmails", [PROVIDER]);

/** Links an opt-in's identifiers to one profile: the profiles plugin's service in a kit that has it. */
export interface SubscriberProfiles {
  link(companyId: string, identifiers: readonly Identifier[]): Promise<unknown>;
  /** `link` for many people of one company, each in turn (`people[i]` the identifiers of one). */
  linkMany(companyId: string, people: ReadonlyArray<readonly Identifier[]>): Promise<unknown>;
}
export const SUBSCRIBER_PROFILES = defineToken<SubscriberProfiles>("SubscriberProfiles", [PROVIDER]);
