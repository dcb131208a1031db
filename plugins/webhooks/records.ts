import type { CollectionSpec, CredentialKind, Doc } from "../../src/index.ts";

/** A webhook: one URL of one application at one company, and the events it receives. */
export interface WebhookRecord extends Doc {
  companyId: string;
  /** The application whose token created it; its signing key signs the deliveries. */
  applicationId: string;
  /** How it was created: an API key (the company's own application) or an OAuth token (an installed one). */
  credentialKind: CredentialKind;
  url: string;
  events: string[];
  /** Set while disabled: by `PUT {disabled: true}`, a 410 answer, or failing for too long. */
  disabledAt?: number;
  disabledReason?: string;
  /** The first failed attempt since the last delivered one. */
  failingSince?: number;
  createdAt: number;
  updatedAt: number;
}

export type DeliveryStatus = "pending" | "delivered" | "failed" | "cancelled";

/**
 * One event to one webhook, and the delivery log's entry for it. Its id is the
 * `webhook-id` header of every attempt; `body` is sent byte for byte on each.
 * Its row is written once, pending; its queue state (`dueAt`) and its last
 * attempt (status, attempts and the fields after them) live in rows of their
 * own ({@link DueDelivery}, {@link DeliveryOutcomeRow}), shown over it ({@link DeliveryRows}).
 */
export interface DeliveryRecord extends Doc {
  webhookId: string;
  companyId: string;
  applicationId: string;
  event: string;
  body: string;
  status: DeliveryStatus;
  /** Requests made (the CLI's redeliveries included). */
  attempts: number;
  /** While pending: when its next attempt may start (its due row's; an earlier version kept it in the delivery's row). */
  dueAt?: number;
  lastAttemptAt?: number;
  /** The receiver's status code of the last attempt that got one. */
  responseStatus?: number;
  /** Milliseconds the last attempt took. */
  latencyMs?: number;
  /** The start of the receiver's last answer (at most RESPONSE_BODY_KEPT bytes). */
  responseBody?: string;
  /** Why the last attempt failed without a 2xx (a timeout, a refused address, a status). */
  error?: string;
  /** The subscriber the event is about, so that privacy requests find its deliveries. */
  phone?: string;
  email?: string;
  createdAt: number;
  updatedAt: number;
}

/**
 * A delivery's own row: what never changes once it is written. Its status, attempts, due time and last attempt are
 * its due and outcome rows' (DeliveryRows shows the three together as a {@link DeliveryRecord}); rows written before
 * those rows existed may still hold them, and the shown record's win.
 */
export type StoredDelivery = Omit<DeliveryRecord, "status" | "attempts" | "dueAt" | "lastAttemptAt" | "responseStatus" | "latencyMs" | "responseBody" | "error">;

/**
 * A pending delivery's place in its webhook's queue, with what its attempts send: deleted when the delivery leaves it
 * (delivered, failed, cancelled).
 */
export interface DueDelivery extends Doc {
  webhookId: string;
  /** When its next attempt may start: its webhook's drain sends it from then on, in (dueAt, id) order. */
  dueAt: number;
  /** Attempts made so far. */
  attempts: number;
  /**
   * The delivery's body, copied here while it is pending: the drain reads its page of due rows and nothing else.
   * Reading each page's deliveries beside it (their whole documents, parsed) was about a tenth of the kit's CPU a
   * delivery (bench:webhooks, docs/webhooks.md).
   */
  body: string;
  /**
   * Set on a delivery read after its webhook's cursor (FirstAttempts) for its first attempt: it has no due row, and
   * this row is made from the delivery's own. Never stored.
   */
  first?: true;
}

/**
 * A webhook's first-attempt cursor (its id is the webhook's): every delivery of the webhook up to `through` (by id)
 * has had its first attempt's outcome stored; those after it are due from their creation (FirstAttempts).
 */
export interface FirstAttemptCursor extends Doc {
  through: string;
}

/** A delivery's last attempt, as the delivery log shows it (its id is the delivery's). */
export interface DeliveryOutcomeRow extends Doc {
  webhookId: string;
  status: DeliveryStatus;
  attempts: number;
  lastAttemptAt?: number;
  responseStatus?: number;
  latencyMs?: number;
  responseBody?: string;
  error?: string;
  updatedAt: number;
}

/** A delivered delivery's last attempt as an outcome page holds it (its id is the delivery's): delivered, and last updated by that attempt. */
export type PagedOutcome = Omit<DeliveryOutcomeRow, "webhookId" | "status" | "updatedAt" | "lastAttemptAt"> & { lastAttemptAt: number };

/**
 * The delivered outcomes of one webhook that its drain wrote together (OutcomePages). A webhook's pages hold ranges
 * of delivery ids that follow one another: `firstId` and `lastId` are its deliveries' smallest and largest.
 */
export type OutcomePage = OutcomePageRange & (OutcomeColumns | { outcomes: PagedOutcome[] });

export interface OutcomePageRange extends Doc {
  webhookId: string;
  firstId: string;
  lastId: string;
}

/**
 * A page's outcomes column by column, each delivery's at its index in `ids`: every one was a first attempt
 * (`attempts` 1) that delivered (no `error`), and most give the same status and answer, held once: about 40 bytes of
 * JSON a delivery. An object a delivery, as pages held them until 2026-11-28 (`outcomes`, still read), took 160:
 * their JSON, their pages' writes and their copy into the database file made the kit's CPU a delivery 1.47 times
 * the bare loop's against 1.34 (bench:webhooks, docs/webhooks.md).
 */
export interface OutcomeColumns {
  ids: string[];
  /** The earliest attempt's time; `after` each attempt's, in milliseconds after it. */
  attemptedAt: number;
  after: number[];
  /** Null where the attempt has none (an outcome row leaves the field out). */
  latencies: Array<number | null>;
  /** The receivers' statuses: one for every attempt, or each attempt's. */
  statuses: number | null | Array<number | null>;
  /** The starts of the receivers' answers: one for every attempt, or each attempt's. */
  bodies: string | null | Array<string | null>;
}

/** A signing key of an application, sealed with the kit secret. */
export interface SigningKeyRecord extends Doc {
  applicationId: string;
  /** AES-256-GCM: iv, tag and ciphertext of the key, base64url, dot-separated. */
  sealed: string;
  createdAt: number;
  /** Set when a newer key replaced it: it signs beside the new one until then. */
  expiresAt?: number;
}

export const WEBHOOKS = "webhooks_webhooks";
export const DELIVERIES = "webhooks_deliveries";
export const SIGNING_KEYS = "webhooks_signing_keys";
export const DUE_DELIVERIES = "webhooks_due_deliveries";
export const DELIVERY_OUTCOMES = "webhooks_delivery_outcomes";
export const OUTCOME_PAGES = "webhooks_outcome_pages";
export const FIRST_ATTEMPT_CURSORS = "webhooks_first_attempt_cursors";

export const webhookCollections: readonly CollectionSpec[] = [
  { name: WEBHOOKS, indexes: [{ fields: ["companyId", "applicationId"] }] },
  {
    name: DELIVERIES,
    // Sparse: an event is about a phone or an email (or neither); privacy deletions look each up by value.
    // A webhook's deliveries newest first (the id ends every index); the log's retention by createdAt.
    indexes: [{ fields: ["webhookId"] }, { fields: ["companyId", "phone"], sparse: true }, { fields: ["companyId", "email"], sparse: true }, { fields: ["createdAt"] }],
    // A rowid table: a delivery is 500-700 bytes, and a WITHOUT ROWID tree, which keeps whole rows in its inner
    // pages too, holds a handful to a page (SQLite's own advice keeps its rows under a twentieth of one): when the
    // outcomes still updated these rows, those updates and their commits took about twice as long (bench:webhooks). A database made by an
    // earlier version keeps its WITHOUT ROWID table, which works the same.
    largeDocuments: true,
    // Each first attempt reads a delivery's body, id and creation alone (FirstAttempts.next): from columns on SQLite,
    // rather than the whole document parsed (the kit's own main-thread CPU a delivery 6.8 µs against 7.6, bench:webhooks-kit-cost).
    fieldsReadAlone: ["body"],
  },
  { name: SIGNING_KEYS, indexes: [{ fields: ["applicationId"] }] },
  // What a webhook's drain reads (RowDrains, sparse as its rows' index must be): its pending deliveries by (dueAt, id).
  // A rowid table, as its rows carry their bodies (the deliveries' comment above); one made before they did keeps its
  // WITHOUT ROWID table.
  { name: DUE_DELIVERIES, indexes: [{ fields: ["webhookId", "dueAt"], sparse: true }], largeDocuments: true },
  // The delivery log by webhook and status (`webhooks deliveries --status`), newest first (the id ends every index).
  { name: DELIVERY_OUTCOMES, indexes: [{ fields: ["webhookId", "status"] }] },
  // A webhook's pages in order (OutcomePages): the last one, and those that may hold a delivery. A rowid table: a page
  // holds a gather's outcomes (a few hundred at full speed).
  { name: OUTCOME_PAGES, indexes: [{ fields: ["webhookId", "lastId"] }], largeDocuments: true },
  { name: FIRST_ATTEMPT_CURSORS },
];

/** The job that keeps the delivery log to its retention, daily, under one key. */
export const PRUNE_JOB = "webhooks.prune";
export const PRUNE_KEY = "webhooks:prune";

/** Delivery ids: `msg_` and an id that sorts in creation order. */
export const DELIVERY_ID_PREFIX = "msg_";
