import { ACCOUNTS, definePlugin, type EventName, type JobHandler } from "../../src/index.ts";
import { ACCOUNTS_SERVICE } from "../accounts/index.ts";
import { SUBSCRIPTIONS_SERVICE } from "../subscriptions/index.ts";
import { webhookCommands } from "./commands.ts";
import { DELIVER_JOB, Deliveries, type DeliverJob } from "./deliveries.ts";
import { DRAIN_JOB, DRAIN_SLOTS, WebhookDrains, type WebhookDrainPayload } from "./delivery-drains.ts";
import { DeliveryRows } from "./delivery-rows.ts";
import { DeliverySender } from "./delivery-sender.ts";
import { FirstAttempts } from "./first-attempts.ts";
import { OutcomePages } from "./outcome-pages.ts";
import { TRANSLATORS, type SubscriberLookup } from "./payloads.ts";
import { deliveriesDueInRowsOfTheirOwn, dueRowsCarryTheirBodies, firstAttemptsAfterCursors } from "./migrations.ts";
import { PRUNE_JOB, PRUNE_KEY, webhookCollections } from "./records.ts";
import { webhookRoutes } from "./routes.ts";
import { SigningKeys } from "./signing-keys.ts";
import {
  WEBHOOK_DELIVERIES,
  WEBHOOK_DELIVERY_ROWS,
  WEBHOOK_FIRST_ATTEMPTS,
  WEBHOOK_OUTCOME_PAGES,
  WEBHOOK_DRAINS,
  WEBHOOK_REGISTRY,
  WEBHOOK_SENDER,
  WEBHOOK_SIGNING_KEYS,
  WEBHOOK_SUBSCRIBERS,
  WEBHOOKS_SETTINGS,
  type WebhooksSettings,
} from "./tokens.ts";
import { WebhookRegistry } from "./webhook-registry.ts";

/** What `kit.plugin("webhooks")` gives a host app. */
export interface WebhooksApi {
  registry: WebhookRegistry;
  deliveries: Deliveries;
  signingKeys: SigningKeys;
}

declare module "../../src/kernel/plugin.ts" {
  interface PluginApis {
    webhooks: WebhooksApi;
  }
}

export type WebhooksPluginOptions = Partial<Omit<WebhooksSettings, "kitSecret">>;

const DAY = 24 * 3_600_000;

export const DEFAULT_WEBHOOKS_SETTINGS: Omit<WebhooksSettings, "kitSecret"> = {
  allowPrivateTargets: false,
  concurrencyPerReceiver: 8,
  attemptTimeoutMs: 15_000,
  disableAfterFailingMs: 5 * DAY,
  deliveryRetentionMs: 30 * DAY,
  maxWebhooksPerApplication: 20,
};


/**
 * Outbound webhooks: `GET|POST /v1/webhooks`, `PUT|DELETE
 * /v1/webhooks/{webhookId}` (scope `webhooks:write`), signed deliveries of the
 * kit's domain events (durable rows, one drain job per webhook), and the `reachkit webhooks` commands.
 * See docs/webhooks.md.
 */
export function webhooksPlugin(options: WebhooksPluginOptions = {}) {
  const settings = { ...DEFAULT_WEBHOOKS_SETTINGS, ...options };
  checkSettings(settings);
  // By event bus: one plugin value may serve several kits.
  const listeners = new WeakMap<object, Array<() => void>>();
  return definePlugin({
    name: "webhooks",
    requires: [ACCOUNTS, ACCOUNTS_SERVICE],
    collections: webhookCollections,
    migrations: [deliveriesDueInRowsOfTheirOwn, dueRowsCarryTheirBodies, firstAttemptsAfterCursors],
    commands: webhookCommands,
    register({ container, secret }) {
      container.bind(WEBHOOKS_SETTINGS, { useValue: { ...settings, kitSecret: secret } });
      container.bind(WEBHOOK_SIGNING_KEYS, { useClass: SigningKeys });
      container.bind(WEBHOOK_REGISTRY, { useClass: WebhookRegistry });
      container.bind(WEBHOOK_SENDER, { useClass: DeliverySender });
      container.bind(WEBHOOK_OUTCOME_PAGES, { useClass: OutcomePages });
      container.bind(WEBHOOK_FIRST_ATTEMPTS, { useClass: FirstAttempts });
      container.bind(WEBHOOK_DELIVERY_ROWS, { useClass: DeliveryRows });
      container.bind(WEBHOOK_DRAINS, { useClass: WebhookDrains });
      container.bind(WEBHOOK_DELIVERIES, { useClass: Deliveries });
      // Subscription events name their subscriber by address; without the subscriptions plugin there are none.
      container.bind(WEBHOOK_SUBSCRIBERS, {
        useFactory: (c): SubscriberLookup => {
          if (!c.has(SUBSCRIPTIONS_SERVICE)) return async () => undefined;
          const subscriptions = c.resolve(SUBSCRIPTIONS_SERVICE);
          return (companyId, channel, address) => subscriptions.findSubscriber(companyId, channel === "TEXT" ? { phone: address } : { email: address });
        },
      });
    },
    routes: ({ resolve }) => webhookRoutes(resolve(WEBHOOK_REGISTRY)),
    jobs: ({ resolve, clock, jobs }) => {
      const deliveries = resolve(WEBHOOK_DELIVERIES);
      return {
        // One drain per webhook, each waiting on its receiver with its slot given back: the lane bounds how many start at once.
        [DRAIN_JOB]: { handler: ((payload: WebhookDrainPayload, context) => deliveries.drain(payload, context)) as JobHandler<never>, slots: DRAIN_SLOTS },
        // Delivery jobs queued before the drains (a database from an earlier version): each hands its deliveries to their drains.
        // In a lane of their own as then: their rows name it.
        [DELIVER_JOB]: { handler: ((payload: DeliverJob) => deliveries.handOver(payload)) as JobHandler<never>, slots: 1 },
        [PRUNE_JOB]: (async () => {
          const deleted = await deliveries.prune();
          await jobs.enqueue({ type: PRUNE_JOB, payload: null, key: PRUNE_KEY, replace: true, runAt: clock.now() + DAY });
          return { deleted };
        }) as JobHandler<never>,
      };
    },
    api: ({ resolve }): WebhooksApi => ({ registry: resolve(WEBHOOK_REGISTRY), deliveries: resolve(WEBHOOK_DELIVERIES), signingKeys: resolve(WEBHOOK_SIGNING_KEYS) }),
    async start({ events, resolve }) {
      const deliveries = resolve(WEBHOOK_DELIVERIES);
      const registry = resolve(WEBHOOK_REGISTRY);
      // In the change's transaction: the deliveries commit with it, or not at all.
      const stops = (Object.keys(TRANSLATORS) as EventName[]).map((name) => events.onInTransaction(name, (payload) => deliveries.fanOut(name, payload)));
      stops.push(events.on("oauth.uninstalled", async ({ companyId, applicationId }) => void (await registry.deleteOfInstall(companyId, applicationId))));
      listeners.set(events, stops);
    },
    async stop({ events, resolve }) {
      for (const stop of listeners.get(events) ?? []) stop();
      listeners.delete(events);
      await resolve(WEBHOOK_SENDER).close();
    },
    /** The company's applications get their first signing key, shown once in `reachkit init`'s output. */
    async provisionCompany({ resolve }, company) {
      const signingKeys = resolve(WEBHOOK_SIGNING_KEYS);
      const applications = await resolve(ACCOUNTS_SERVICE).listApplications(company.id);
      const keys: string[] = [];
      for (const application of applications) {
        const key = await signingKeys.ensure(application.id);
        if (key !== undefined) keys.push(key);
      }
      return keys.length === 1 ? { webhookSigningKey: keys[0] } : keys.length > 1 ? { webhookSigningKeys: keys } : {};
    },
    deleteSubjectData: ({ resolve }, subject) => resolve(WEBHOOK_DELIVERIES).deleteSubjectData(subject),
  });
}

function checkSettings(settings: Omit<WebhooksSettings, "kitSecret">): void {
  const whole = (name: keyof typeof settings, min: number, max: number) => {
    const value = settings[name];
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) {
      throw new RangeError(`webhooksPlugin: ${name} must be a whole number from ${min} to ${max}, got ${String(value)}`);
    }
  };
  whole("concurrencyPerReceiver", 1, 1_000);
  whole("attemptTimeoutMs", 1, 120_000);
  whole("disableAfterFailingMs", 1, 365 * DAY);
  whole("deliveryRetentionMs", DAY, 365 * DAY);
  whole("maxWebhooksPerApplication", 1, 1_000);
}
