/**
 * The event names a webhook may subscribe to. Names are case-sensitive, as in
 * the reference service. Some are accepted on create but not sent yet: the
 * feature that produces them is not in reachkit yet (docs/webhooks.md).
 */
export const SENT_EVENTS = [
  "sms.subscribed",
  "sms.unsubscribed",
  "email.subscribed",
  "email.unsubscribed",
  "sms.sent",
  "sms.delivered",
  "sms.undelivered",
  "sms.failed",
  "sms.inbound_message",
  "email.sent",
  "email.delivered",
  "email.undelivered",
  "email.failed",
  "custom_attribute.set",
  "catalog.variant.back_in_stock",
  "catalog.variant.low_inventory",
  "catalog.variant.price_dropped",
  "privacy.request.processed",
  "appointment.step.queued",
  "appointment.step.skipped",
  "sms.message_link_click",
  "email.message_link_click",
] as const;

/** Older names of the reference's examples: a webhook subscribed to one gets the event under that name. */
export const EVENT_ALIASES: Readonly<Record<string, (typeof SENT_EVENTS)[number]>> = {
  "phone.subscribed": "sms.subscribed",
  "phone.unsubscribed": "sms.unsubscribed",
};

/** Accepted so that clients of the reference service can subscribe, never sent until reachkit produces them. */
export const NOT_YET_SENT_EVENTS = ["email.opened"] as const;

export const KNOWN_EVENTS: readonly string[] = [...SENT_EVENTS, ...Object.keys(EVENT_ALIASES), ...NOT_YET_SENT_EVENTS];

export function isSentEvent(name: string): name is (typeof SENT_EVENTS)[number] {
  return (SENT_EVENTS as readonly string[]).includes(name);
}

export function isKnownEvent(name: string): boolean {
  return KNOWN_EVENTS.includes(name);
}
