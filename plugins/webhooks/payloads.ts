import { createHash } from "node:crypto";
import type { Company, EventName, MessageStatusEvent, ReachkitEvents } from "../../src/index.ts";
import type { AppointmentStepEvent } from "../appointments/index.ts";
import type { LinkClickEvent } from "../campaigns/index.ts";
import type { Subscriber, SubscriptionChannel, SubscriptionEvent } from "../subscriptions/index.ts";
import { isSentEvent, type SENT_EVENTS } from "./event-catalog.ts";

export type SentEvent = (typeof SENT_EVENTS)[number];

/** Finds the subscriber a subscription event names: its phone (TEXT) or email (EMAIL) at the company. */
export type SubscriberLookup = (companyId: string, channel: SubscriptionChannel, address: string) => Promise<Subscriber | undefined>;

/** What a domain event becomes for webhooks: its name, the body's fields after the envelope, and whom it is about. */
export interface WebhookEvent {
  companyId: string;
  type: SentEvent;
  /** Epoch ms of the change. */
  at: number;
  /** The fields after `type`, `timestamp` and `company`, given the company. */
  fields: Record<string, unknown>;
  /** The subscriber's addresses, kept on the delivery so privacy requests find it. */
  subject: { phone?: string; email?: string };
}

/** The domain events webhooks carry, and what each becomes (undefined: nothing to send). */
export type Translators = {
  [K in EventName]?: (event: ReachkitEvents[K], subscribers: SubscriberLookup, now: number) => Promise<WebhookEvent | undefined>;
};

export const TRANSLATORS: Translators = {
  "message.status_changed": async (event, subscribers) => messageStatusEvent(event, subscribers),
  "sms.inbound_message": async (event, subscribers) => ({
    companyId: event.companyId,
    type: "sms.inbound_message",
    at: event.at,
    fields: {
      subscriber: await subscriberFields(event.companyId, "TEXT", event.from, subscribers),
      message: { body: event.body, to: event.to, ...(event.messageId !== undefined ? { id: event.messageId } : {}) },
    },
    subject: { phone: event.from },
  }),
  "profile.attributes.set": async (event) => customAttributeEvent(event),
  // A pending TEXT subscription waits for its "Y": it is subscribed when confirmed.
  "subscription.created": (event, subscribers) => (event.state === "active" ? subscriptionEvent(event, "subscribed", subscribers) : Promise.resolve(undefined)),
  "subscription.confirmed": (event, subscribers) => subscriptionEvent(event, "subscribed", subscribers),
  "subscription.unsubscribed": (event, subscribers) => subscriptionEvent(event, "unsubscribed", subscribers),
  "catalog.variant.back_in_stock": async (event, _subscribers, now) => catalogEvent("catalog.variant.back_in_stock", event, now, {}),
  "catalog.variant.low_inventory": async (event, _subscribers, now) => catalogEvent("catalog.variant.low_inventory", event, now, { threshold: event.threshold }),
  "catalog.variant.price_dropped": async (event, _subscribers, now) => catalogEvent("catalog.variant.price_dropped", event, now, { currency_code: event.currencyCode }),
  "privacy.request.processed": async (event) => ({
    companyId: event.companyId,
    type: "privacy.request.processed",
    at: event.at,
    fields: { privacy_request: { id: event.requestId, removed_records: event.removedRecords } },
    subject: {},
  }),
  "appointment.step.queued": async (event) => appointmentEvent("appointment.step.queued", event),
  "appointment.step.skipped": async (event) => appointmentEvent("appointment.step.skipped", event),
  "sms.message_link_click": (event, subscribers) => linkClickEvent("sms", event, subscribers),
  "email.message_link_click": (event, subscribers) => linkClickEvent("email", event, subscribers),
};

/** The body of a delivery: the reference's envelope (`type`, `timestamp` in ms, `company`), then the event's fields. */
export function webhookBody(type: string, event: WebhookEvent, company: Company | undefined): string {
  return JSON.stringify({
    type,
    timestamp: event.at,
    company: { display_name: company?.name ?? "", company_id: event.companyId },
    ...event.fields,
  });
}

async function subscriptionEvent(event: SubscriptionEvent, change: "subscribed" | "unsubscribed", subscribers: SubscriberLookup): Promise<WebhookEvent> {
  const subscriber = await subscriberFields(event.companyId, event.channel, event.address, subscribers, event.subscriberId);
  return {
    companyId: event.companyId,
    type: `${event.channel === "TEXT" ? "sms" : "email"}.${change}`,
    at: event.at,
    fields: { subscriber, subscription: { type: event.type, channel: event.channel } },
    subject: { phone: subscriber.phone, email: subscriber.email },
  };
}

/** The reference's `subscriber` object of the subscriber at `address`, as far as the kit knows them. */
async function subscriberFields(companyId: string, channel: SubscriptionChannel, address: string, subscribers: SubscriberLookup, subscriberId?: string) {
  const subscriber = await subscribers(companyId, channel, address);
  const id = subscriberId ?? subscriber?.id;
  const phone = subscriber?.phone ?? (channel === "TEXT" ? address : undefined);
  const email = subscriber?.email ?? (channel === "EMAIL" ? address : undefined);
  const identifiers = subscriber?.externalIdentifiers;
  return {
    ...(id !== undefined ? { external_id: externalId(id) } : {}),
    ...(phone !== undefined ? { phone } : {}),
    ...(email !== undefined ? { email } : {}),
    external_identifiers: {
      client_user_id: identifiers?.clientUserId !== undefined ? [identifiers.clientUserId] : [],
      custom_identifiers: Object.fromEntries((identifiers?.customIdentifiers ?? []).map((identifier) => [identifier.name, identifier.value])),
    },
  };
}

/** A message's delivery status as `sms.sent`, `sms.delivered`, `sms.undelivered` or `sms.failed` (and `email.*` likewise). */
async function messageStatusEvent(event: MessageStatusEvent, subscribers: SubscriberLookup): Promise<WebhookEvent | undefined> {
  const type = `${event.channel}.${event.status}`;
  if (!isSentEvent(type)) return undefined;
  const channel = event.channel === "sms" ? "TEXT" : "EMAIL";
  return {
    companyId: event.companyId,
    type,
    at: event.at,
    fields: {
      subscriber: await subscriberFields(event.companyId, channel, event.to, subscribers),
      message: {
        id: event.messageId,
        kind: event.kind,
        status: event.status,
        previous_status: event.previousStatus,
        ...(event.providerMessageId !== undefined ? { provider_message_id: event.providerMessageId } : {}),
        ...(event.errorCode !== undefined ? { error_code: event.errorCode } : {}),
        ...(event.reason !== undefined ? { reason: event.reason } : {}),
      },
    },
    subject: channel === "TEXT" ? { phone: event.to } : { email: event.to },
  };
}

/** `custom_attribute.set`: whom the request named (its phone, email and external identifiers), and the values set. */
function customAttributeEvent(event: ReachkitEvents["profile.attributes.set"]): WebhookEvent {
  const valueOf = (kind: string) => event.user.find((identifier) => identifier.kind === kind)?.value;
  const phone = valueOf("phone");
  const email = valueOf("email");
  const clientUserId = valueOf("clientUserId");
  const custom = event.user.filter((identifier) => identifier.kind === "custom");
  return {
    companyId: event.companyId,
    type: "custom_attribute.set",
    at: event.at,
    fields: {
      subscriber: {
        ...(phone !== undefined ? { phone } : {}),
        ...(email !== undefined ? { email } : {}),
        external_identifiers: {
          client_user_id: clientUserId !== undefined ? [clientUserId] : [],
          custom_identifiers: Object.fromEntries(custom.map((identifier) => [identifier.name, identifier.value])),
        },
      },
      custom_attributes: Object.fromEntries(event.attributes.map((attribute) => [attribute.name, attribute.value])),
    },
    subject: { phone, email },
  };
}

type CatalogEvent = ReachkitEvents["catalog.variant.back_in_stock" | "catalog.variant.low_inventory" | "catalog.variant.price_dropped"];

function catalogEvent(type: SentEvent, event: CatalogEvent, now: number, extra: Record<string, unknown>): WebhookEvent {
  const { product } = event;
  return {
    companyId: event.companyId,
    type,
    at: now,
    fields: {
      upload_id: event.uploadId,
      product: { id: product.id, name: product.name, link: product.link, ...(product.imageUrl !== undefined ? { image_url: product.imageUrl } : {}) },
      variant: event.variant,
      before: event.before,
      after: event.after,
      ...extra,
    },
    subject: {},
  };
}

function appointmentEvent(type: SentEvent, event: AppointmentStepEvent): WebhookEvent {
  return {
    companyId: event.companyId,
    type,
    at: event.at,
    fields: {
      subscriber: { phone: event.phone },
      appointment: {
        reminder_uuid: event.reminderUuid,
        event_type_uuid: event.eventTypeUuid,
        ...(event.externalEventId !== undefined ? { external_event_id: event.externalEventId } : {}),
        event_date_time: new Date(event.eventAt).toISOString(),
        step: event.step,
        ...(event.messageId !== undefined ? { message_id: event.messageId } : {}),
        ...(event.reason !== undefined ? { reason: event.reason } : {}),
      },
    },
    subject: { phone: event.phone },
  };
}

/** A click on a tracked short link: whom the message went to (when the link knows), and the link. */
async function linkClickEvent(channel: "sms" | "email", event: LinkClickEvent, subscribers: SubscriberLookup): Promise<WebhookEvent> {
  const { address } = event;
  const subscriber = address !== undefined ? await subscriberFields(event.companyId, channel === "sms" ? "TEXT" : "EMAIL", address, subscribers) : undefined;
  return {
    companyId: event.companyId,
    type: `${channel}.message_link_click`,
    at: event.at,
    fields: {
      ...(subscriber !== undefined ? { subscriber } : {}),
      link: {
        id: event.linkId,
        url: event.url,
        source: event.source,
        ...(event.campaignId !== undefined ? { campaign_id: event.campaignId } : {}),
        ...(event.variant !== undefined ? { variant: event.variant } : {}),
      },
    },
    subject: { phone: subscriber?.phone, email: subscriber?.email },
  };
}

/**
 * The reference's `subscriber.external_id` is a number: reachkit's subscriber
 * ids are strings, so it sends a number that stays the same for the subscriber
 * (52 bits of a hash of its id, exact in every JSON reader).
 */
export function externalId(subscriberId: string): number {
  return Number.parseInt(createHash("sha256").update(subscriberId).digest("hex").slice(0, 13), 16);
}
