import { ACCOUNTS, definePlugin, SMS_SENDER } from "../../src/index.ts";
import { PROFILES_SERVICE } from "../profiles/index.ts";
import { subscriptionsCommands } from "./commands.ts";
import { DEFAULT_EMAIL_CONFIRMATION_TTL_MS, EmailLinks } from "./email-links.ts";
import { emailLinkRoutes } from "./email-routes.ts";
import { InboundTexts } from "./inbound-texts.ts";
import { NoticeTemplates } from "./notice-templates.ts";
import { Notices } from "./notices.ts";
import { OptInBatch } from "./opt-in-batch.ts";
import { OptIns } from "./opt-ins.ts";
import { subscriptionCollections } from "./records.ts";
import { subscriptionRoutes } from "./routes.ts";
import { fictitiousSenderNumber, SenderNumbers } from "./sender-numbers.ts";
import { signUpUnitsCollection, SignUpUnits } from "./sign-up-units.ts";
import { SubscriberDirectory } from "./subscriber-directory.ts";
import { SubscriptionEmails } from "./subscription-emails.ts";
import { SubscriptionStore } from "./subscription-store.ts";
import { SubscriptionsService } from "./subscriptions-service.ts";
import {
  EMAIL_LINKS,
  INBOUND_TEXTS,
  NOTICE_TEMPLATES,
  NOTICES,
  OPT_IN_BATCH,
  OPT_INS,
  SENDER_NUMBERS_SERVICE,
  SIGN_UP_UNITS_SERVICE,
  SUBSCRIBER_DIRECTORY,
  SUBSCRIBER_PROFILES,
  SUBSCRIPTION_EMAILS,
  SUBSCRIPTION_STORE,
  SUBSCRIPTIONS_SETTINGS,
  type SubscriberProfiles,
  SUBSCRIPTIONS_SERVICE,
  UNSUBSCRIBES,
} from "./tokens.ts";
import { Unsubscribes } from "./unsubscribes.ts";

const NO_PROFILES: SubscriberProfiles = { link: async () => undefined, linkMany: async () => undefined };

/** The in-process service of the subscriptions plugin (`kit.plugin("subscriptions")`). */
export type SubscriptionsApi = SubscriptionsService;

declare module "../../src/kernel/plugin.ts" {
  interface PluginApis {
    subscriptions: SubscriptionsApi;
  }
}

export interface SubscriptionsPluginOptions {
  /** Picks the sender number of a new company (default: a fictitious +1555 number; change it with `reachkit sender-number set`). */
  allocateSenderNumber?: () => string;
  /**
   * A repeated opt-in (or unsubscribe) is recorded and answered by text, but at most one such text goes
   * to a phone per kind (a "Reply Y" request, "already subscribed", "already unsubscribed") within this
   * window; later attempts in it are recorded only, their text kept in the outbox as suppressed. Default
   * 10 minutes; 0 answers every attempt.
   */
  repeatTextWindowMs?: number;
  /** How long the link of a double opt-in's confirmation email works. Default 7 days. */
  emailConfirmationTtlMs?: number;
}

/** The default of `repeatTextWindowMs`: 10 minutes. */
export const DEFAULT_REPEAT_TEXT_WINDOW_MS = 10 * 60_000;

/**
 * Subscribers, subscriptions and their eligibility, double opt-in (texts by a
 * Y reply, emails by a confirmation link when the sign-up unit asks), inbound
 * SMS keywords, emails to subscribers with one-click unsubscribe, API sign-up
 * units and sender numbers: `POST|GET|DELETE /v1/subscriptions`,
 * `POST /v1/subscriptions/unsubscribe`, `POST /sms/inbound`,
 * `GET /email/confirm`, `GET|POST /email/unsubscribe`.
 */
export function subscriptionsPlugin(options: SubscriptionsPluginOptions = {}) {
  const repeatTextWindowMs = options.repeatTextWindowMs ?? DEFAULT_REPEAT_TEXT_WINDOW_MS;
  if (!Number.isSafeInteger(repeatTextWindowMs) || repeatTextWindowMs < 0) {
    throw new RangeError(`subscriptionsPlugin: repeatTextWindowMs must be a whole number of milliseconds, at least 0, got ${String(repeatTextWindowMs)}`);
  }
  const confirmationTtlMs = options.emailConfirmationTtlMs ?? DEFAULT_EMAIL_CONFIRMATION_TTL_MS;
  if (!Number.isSafeInteger(confirmationTtlMs) || confirmationTtlMs < 1) {
    throw new Error(`subscriptionsPlugin: emailConfirmationTtlMs must be a whole number of milliseconds of at least 1, got ${String(confirmationTtlMs)}`);
  }
  return definePlugin({
    name: "subscriptions",
    requires: [ACCOUNTS],
    collections: [signUpUnitsCollection, ...subscriptionCollections],
    commands: subscriptionsCommands,
    migrations: [
      {
        // Companies made before this plugin had sender numbers get one, so their inbound texts route.
        id: "assign-sender-numbers",
        async up({ resolve }) {
          const service = resolve(SUBSCRIPTIONS_SERVICE);
          for (const company of await resolve(ACCOUNTS).listCompanies()) {
            if (company.senderNumber === undefined) await service.senderNumbers.assign(company.id);
          }
        },
      },
    ],
    register({ container }) {
      container.bind(SUBSCRIPTIONS_SETTINGS, {
        useValue: { allocateSenderNumber: options.allocateSenderNumber ?? fictitiousSenderNumber, repeatTextWindowMs, emailConfirmationTtlMs: confirmationTtlMs },
      });
      container.bind(SIGN_UP_UNITS_SERVICE, { useClass: SignUpUnits });
      container.bind(SENDER_NUMBERS_SERVICE, { useClass: SenderNumbers });
      container.bind(NOTICE_TEMPLATES, { useClass: NoticeTemplates });
      container.bind(NOTICES, { useClass: Notices });
      container.bind(SUBSCRIPTION_STORE, { useClass: SubscriptionStore });
      container.bind(SUBSCRIBER_DIRECTORY, { useClass: SubscriberDirectory });
      container.bind(EMAIL_LINKS, { useClass: EmailLinks });
      container.bind(SUBSCRIPTION_EMAILS, { useClass: SubscriptionEmails });
      container.bind(OPT_IN_BATCH, { useClass: OptInBatch });
      container.bind(OPT_INS, { useClass: OptIns });
      container.bind(UNSUBSCRIBES, { useClass: Unsubscribes });
      container.bind(INBOUND_TEXTS, { useClass: InboundTexts });
      container.bind(SUBSCRIPTIONS_SERVICE, { useClass: SubscriptionsService });
      // A kit without the profiles plugin links nothing.
      container.bind(SUBSCRIBER_PROFILES, { useFactory: (c) => (c.has(PROFILES_SERVICE) ? c.resolve(PROFILES_SERVICE) : NO_PROFILES) });
    },
    routes: (context) => [
      ...subscriptionRoutes(context, context.resolve(SUBSCRIPTIONS_SERVICE)),
      ...emailLinkRoutes(context.resolve(SUBSCRIPTIONS_SERVICE), context.resolve(EMAIL_LINKS), context.resolve(ACCOUNTS)),
    ],
    jobs: ({ resolve }) => resolve(SUBSCRIPTIONS_SERVICE).jobHandlers(),
    api: ({ resolve }): SubscriptionsApi => resolve(SUBSCRIPTIONS_SERVICE),
    async provisionCompany({ resolve, publicUrl }, company) {
      const units = resolve(SIGN_UP_UNITS_SERVICE);
      const created = [
        await units.create({ companyId: company.id, type: "MARKETING", language: "en", country: "US" }),
        await units.create({ companyId: company.id, type: "TRANSACTIONAL", language: "en", country: "US" }),
      ];
      const provisioned = await resolve(SUBSCRIPTIONS_SERVICE).provision(company.id);
      return {
        signUpSources: created.map((unit) => ({ id: unit.id, type: unit.type, language: unit.language, country: unit.country })),
        ...provisioned,
        // The full URL: under an embedder's mount prefix the path alone is not where the provider must call.
        inboundWebhookUrl: publicUrl("api", provisioned.inboundWebhookPath),
      };
    },
    deleteSubjectData: ({ resolve }, subject) => resolve(SUBSCRIPTIONS_SERVICE).deleteSubjectData(subject),
    async start({ container, resolve, events }) {
      const service = resolve(SUBSCRIPTIONS_SERVICE);
      // The carrier refuses every text to a number that opted out there (Twilio's error 21610): its TEXT subscriptions end, without a text.
      events.on("sms.recipient_opted_out", async ({ companyId, phone }) => {
        await service.unsubscribeNow(companyId, { user: { phone }, notification: { disabled: true } }, { source: "carrier_opt_out" });
      });
      // Adapters that receive texts themselves (SMPP, the memory adapter in tests) hand them straight to the service.
      if (!container.has(SMS_SENDER)) return;
      resolve(SMS_SENDER).onInbound?.(async (message) => void (await service.handleInbound(message)));
    },
  });
}
