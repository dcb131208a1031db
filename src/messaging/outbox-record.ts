import type { CoreMigration } from "../kernel/migrations.ts";
import type { CollectionSpec, Doc } from "../ports/storage.ts";
import type { DeliveryStatus } from "./delivery-status.ts";

/** A delivery status, or `suppressed`: recorded and never sent (the same text went to the number recently). */
export const OUTBOX_STATUSES = ["queued", "sent", "delivered", "undelivered", "failed", "suppressed"] as const satisfies readonly (DeliveryStatus | "suppressed")[];
export type OutboxStatus = (typeof OUTBOX_STATUSES)[number];

/** How a message travels: a text (SMS/MMS) or an email. */
export type OutboxChannel = "sms" | "email";

/** One outbound SMS/MMS or email as the outbox keeps it: persisted before it is sent. */
export interface OutboxMessage extends Doc {
  companyId: string;
  /** Absent on texts stored before the outbox carried emails: read it with {@link channelOf}. */
  channel?: OutboxChannel;
  /** The recipient: an E.164 number, or an email address. */
  to: string;
  /** The sender number it went (or goes) out from, or the email's From. */
  from: string;
  /** The text exactly as sent, prefix included; an email's plain-text part. */
  body: string;
  /** An email's subject. */
  subject?: string;
  /** An email's HTML part. */
  html?: string;
  /** An email's further header fields (List-Unsubscribe, List-Unsubscribe-Post). */
  headers?: Record<string, string>;
  mediaUrl?: string;
  /** What the message is for: `opt_in_confirmation`, `transactional`, `reminder`... */
  kind: string;
  status: OutboxStatus;
  /** Why it failed, was not delivered or was suppressed. */
  reason?: string;
  /** The provider's error code when it refused or could not deliver the message. */
  errorCode?: string;
  /** Unique per company; the provider receives the message id as its idempotency key. */
  idempotencyKey: string;
  /** The provider's id for the message, once it took it. */
  providerMessageId?: string;
  /**
   * The provider's id again, for a message whose receipts may come without its id (SMPP's, the memory
   * adapter's): what such a receipt finds it by. Absent when its sender's receipts carry the message id
   * (`SmsSender.receiptsCarryMessageId`: Twilio's), so that sending it adds no index entry no receipt reads.
   */
  receiptKey?: string;
  /** Free tracking data (a campaign message id, a reminder uuid...). */
  tags?: Record<string, string>;
  attempts: number;
  createdAt: number;
  updatedAt: number;
  sentAt?: number;
  deliveredAt?: number;
  /**
   * Set while an attempt whose outcome is unknown may have reached the
   * provider (from when it started): the next attempt of a text asks the
   * provider instead of sending blindly; an email's is not sent again.
   */
  inFlightSince?: number;
  /**
   * While queued: when its next attempt may start (its sender's drain sends it from then on, in
   * (dueAt, id) order). While an attempt is in flight, when the drain after a crash may try it again.
   * Absent once it left the queue (sent, failed, suppressed).
   */
  dueAt?: number;
}

export const channelOf = (message: OutboxMessage): OutboxChannel => message.channel ?? "sms";

export const OUTBOX_COLLECTION = "reachkit_outbox";

export const outboxCollection: CollectionSpec = {
  name: OUTBOX_COLLECTION,
  indexes: [
    { fields: ["companyId", "idempotencyKey"], unique: true },
    // A number's messages, in one company (repeat checks, privacy deletions, the console's filter) or in all
    // (`reachkit messages --to`): one index serves both, as "to" comes first. Every message writes an entry in
    // each index, so none is declared that no query reads through (test/messaging/outbox-indexes.test.ts).
    { fields: ["to", "companyId", "createdAt"] },
    // Receipts that do not carry the message id (SMPP) find their message by the provider's id, its receiptKey.
    // Sparse: a message has none until it is sent, none at all when its sender's receipts carry its id (Twilio's),
    // and no query asks for one without.
    { fields: ["receiptKey"], sparse: true },
    // A company's messages newest first, all or in one status (the console's list and daily counts).
    { fields: ["companyId", "createdAt"] },
    { fields: ["companyId", "status", "createdAt"] },
    // A sender's queued messages due by now, in (dueAt, id) order: what its drain reads (the id ends every index).
    // Sparse: a message leaves it once it is no longer queued (its dueAt is cleared), and every read names a dueAt.
    { fields: ["from", "dueAt"], sparse: true },
  ],
};

/**
 * How long after its send a text's receipt may still come, for the upgrade below: an SMSC keeps trying a
 * text for its validity period (at most a few days; SMPP's default is the SMSC's, commonly 48 to 72 hours).
 */
const RECEIPT_HORIZON_MS = 7 * 86_400_000;

/**
 * Messages sent before receipt keys existed were found through an index on their provider id, now dropped:
 * those still sent within the receipt horizon (a receipt may yet move them; a final status stays) take their
 * provider id as their receipt key. Older ones are left as they are: a database whose file or console sender
 * left every text `sent` is not rewritten whole. Once per database; no index serves `status` alone, so it
 * reads the outbox through once.
 */
export const outboxReceiptKeys: CoreMigration = {
  id: "outbox-receipt-keys",
  async up(storage, now) {
    const messages = storage.collection<OutboxMessage>(OUTBOX_COLLECTION);
    const where = { status: "sent", sentAt: { gte: now - RECEIPT_HORIZON_MS }, providerMessageId: { exists: true }, receiptKey: { exists: false } } as const;
    let after: string | undefined;
    do {
      const page = await messages.find({ where, limit: 500, ...(after !== undefined ? { after } : {}) });
      for (const message of page.items) await messages.updateWhere({ id: message.id }, { receiptKey: message.providerMessageId });
      after = page.nextCursor;
    } while (after !== undefined);
  },
};
