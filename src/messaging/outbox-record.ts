import type { CollectionSpec, Doc } from "../ports/storage.ts";

export const OUTBOX_STATUSES = ["queued", "sent", "failed", "suppressed"] as const;
export type OutboxStatus = (typeof OUTBOX_STATUSES)[number];

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
  /** Why it failed or was suppressed. */
  reason?: string;
  /** Unique per company; the provider receives the message id as its idempotency key. */
  idempotencyKey: string;
  providerMessageId?: string;
  /** Free tracking data (a campaign message id, a reminder uuid...). */
  tags?: Record<string, string>;
  attempts: number;
  createdAt: number;
  updatedAt: number;
  sentAt?: number;
}

export const OUTBOX_COLLECTION = "reachkit_outbox";

export const outboxCollection: CollectionSpec = {
  name: OUTBOX_COLLECTION,
  indexes: [
    { fields: ["companyId", "idempotencyKey"], unique: true },
    { fields: ["companyId", "to", "createdAt"] },
    { fields: ["to", "createdAt"] },
    { fields: ["createdAt"] },
    // A company's messages newest first, all or in one status (the console's list and daily counts).
    { fields: ["companyId", "createdAt"] },
    { fields: ["companyId", "status", "createdAt"] },
  ],
};
