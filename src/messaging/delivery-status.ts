/**
 * The delivery status of an outbound message, for every channel: what the
 * provider reported last, moving only forward. SMS uses it in the outbox;
 * email and other channels record their messages with the same statuses,
 * receipts and event.
 */

/**
 * `queued`: recorded, not handed over yet; `sent`: the provider took it;
 * `delivered`: it reached the recipient; `undelivered`: the provider or the
 * carrier could not deliver it; `failed`: it was never sent (refused, or
 * given up on).
 */
export type DeliveryStatus = "queued" | "sent" | "delivered" | "undelivered" | "failed";

/** The statuses a provider reports after the message left. */
export type ReportedStatus = Exclude<DeliveryStatus, "queued">;

/** A provider's report on one message (a status callback, an SMPP receipt). */
export interface DeliveryReceipt {
  /** The provider's id of the message. */
  providerMessageId: string;
  /** The outbox's id (the idempotency key), when the provider carries it back (in the status callback's URL). */
  messageId?: string;
  status: ReportedStatus;
  /** The provider's error code (Twilio's 30003, an SMPP receipt's err). */
  errorCode?: string;
  /** The provider's words for it. */
  errorMessage?: string;
  /** The recipient opted out at the carrier: their subscriptions on this channel end. */
  optedOut?: boolean;
}

const RANK: Readonly<Record<DeliveryStatus, number>> = { queued: 0, sent: 1, delivered: 2, undelivered: 2, failed: 2 };

/**
 * The status after a report, or undefined when the report changes nothing:
 * receipts arrive out of order (a late "sent" after "delivered") and twice,
 * so a status only moves forward, and a final one (delivered, undelivered,
 * failed) stays.
 */
export function nextDeliveryStatus(current: DeliveryStatus, reported: ReportedStatus): ReportedStatus | undefined {
  return RANK[reported] > RANK[current] ? reported : undefined;
}

/** The `message.status_changed` event: a message's delivery status moved. */
export interface MessageStatusEvent {
  channel: "sms" | "email";
  companyId: string;
  messageId: string;
  /** The recipient (a phone for SMS). */
  to: string;
  /** What the message is for (`opt_in_confirmation`, `reminder`, ...). */
  kind: string;
  status: ReportedStatus;
  previousStatus: DeliveryStatus;
  providerMessageId?: string;
  errorCode?: string;
  /** Why it failed or was not delivered, in words. */
  reason?: string;
  at: number;
}

/** The `sms.recipient_opted_out` event: the carrier says the recipient opted out of this sender's texts. */
export interface RecipientOptedOutEvent {
  companyId: string;
  /** The recipient's phone. */
  phone: string;
  /** The sender number the carrier refused. */
  from: string;
  messageId: string;
  errorCode?: string;
  at: number;
}

declare module "../events/event-bus.ts" {
  interface ReachkitEvents {
    "message.status_changed": MessageStatusEvent;
    "sms.recipient_opted_out": RecipientOptedOutEvent;
  }
}
