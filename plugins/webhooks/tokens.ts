import { defineToken } from "../../src/index.ts";
import type { Deliveries } from "./deliveries.ts";
import type { WebhookDrains } from "./delivery-drains.ts";
import type { DeliveryRows } from "./delivery-rows.ts";
import type { DeliverySender } from "./delivery-sender.ts";
import type { FirstAttempts } from "./first-attempts.ts";
import type { OutcomePages } from "./outcome-pages.ts";
import type { SigningKeys } from "./signing-keys.ts";
import type { SubscriberLookup } from "./payloads.ts";
import type { WebhookRegistry } from "./webhook-registry.ts";

/** The webhooks plugin's settings, defaults applied (see `webhooksPlugin`). */
export interface WebhooksSettings {
  /** Deliver to loopback, private, link-local and metadata addresses too (tests, a receiver on the same network). */
  allowPrivateTargets: boolean;
  /** Requests in flight at once to one webhook (its drain), and connections kept to one receiver (scheme, host and port). */
  concurrencyPerReceiver: number;
  /** How long one attempt may take, connection to last byte of the answer. */
  attemptTimeoutMs: number;
  /** A webhook whose every attempt failed for this long is disabled. */
  disableAfterFailingMs: number;
  /** Finished deliveries are kept this long in the delivery log. */
  deliveryRetentionMs: number;
  /** Webhooks one application may have at one company. */
  maxWebhooksPerApplication: number;
  /** The kit secret: signing keys are stored encrypted with a key derived from it. */
  kitSecret: string;
}

const PROVIDER = "reachkit/plugins/webhooks (webhooksPlugin)";
export const WEBHOOKS_SETTINGS = defineToken<WebhooksSettings>("WebhooksSettings", [PROVIDER]);
export const WEBHOOK_REGISTRY = defineToken<WebhookRegistry>("WebhookRegistry", [PROVIDER]);
export const WEBHOOK_SIGNING_KEYS = defineToken<SigningKeys>("WebhookSigningKeys", [PROVIDER]);
export const WEBHOOK_DELIVERIES = defineToken<Deliveries>("WebhookDeliveries", [PROVIDER]);
export const WEBHOOK_DRAINS = defineToken<WebhookDrains>("WebhookDrains", [PROVIDER]);
export const WEBHOOK_DELIVERY_ROWS = defineToken<DeliveryRows>("WebhookDeliveryRows", [PROVIDER]);
export const WEBHOOK_OUTCOME_PAGES = defineToken<OutcomePages>("WebhookOutcomePages", [PROVIDER]);
export const WEBHOOK_FIRST_ATTEMPTS = defineToken<FirstAttempts>("WebhookFirstAttempts", [PROVIDER]);
export const WEBHOOK_SENDER = defineToken<DeliverySender>("WebhookSender", [PROVIDER]);
/** Finds the subscriber an event names, when the kit has the subscriptions plugin. */
export const WEBHOOK_SUBSCRIBERS = defineToken<SubscriberLookup>("WebhookSubscribers", [PROVIDER]);
