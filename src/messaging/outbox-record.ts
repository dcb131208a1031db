import type { CollectionSpec, Doc } from "../ports/storage.ts";
import type { DeliveryStatus } from "./delivery-status.ts";

/** A delivery status, or `suppressed`: recorded and never sent (the same text went to the number recently). */
export type OutboxStatus = DeliveryStatus | "suppressed";

/** One outbound SMS/MMS as the outbox keeps it: persisted before it is sent. */
export interface OutboxMessage extends Doc {
  companyId: string;
  /** E.164 recipient. */
  to: string;
  /** The sender number it went (or goes) out from. */
  from: string;
  /** The text exactly as sent, prefix included. */
  body: string;
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
  providerMessageId?: string;
  /** Free tracking data (a campaign message id, a reminder uuid...). */
  tags?: Record<string, string>;
  attempts: number;
  createdAt: number;
  updatedAt: number;
  sentAt?: number;
  deliveredAt?: number;
  /**
   * Set while an attempt whose outcome is unknown may have reached the
   * provider (from when it started): the next attempt asks the provider
   * instead of sending blindly.
   */
  inFlightSince?: number;
}

export const OUTBOX_COLLECTION = "reachkit_outbox";

export const outboxCollection: CollectionSpec = {
  name: OUTBOX_COLLECTION,
  indexes: [
    { fields: ["companyId", "idempotencyKey"], unique: true },
    { fields: ["companyId", "to", "createdAt"] },
    { fields: ["to", "createdAt"] },
    { fields: ["createdAt"] },
    // Receipts that do not carry the message id (SMPP) find their message by the provider's.
    { fields: ["providerMessageId"] },
  ],
};
