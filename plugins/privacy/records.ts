import type { CollectionSpec, Doc } from "../../src/index.ts";

/** Where a request came from. */
export type PrivacyRequestOrigin = "v1" | "legacy" | "in_process";

/**
 * A privacy (deletion) request (interface 2.5). The subject's phone, email and
 * client user id are kept as given only until the request is processed; then
 * the phone and email are masked and the client user id is dropped.
 */
export interface PrivacyRequest extends Doc {
  /**
   * The integer id of legacy answers: 1, 2, 3... per company, in creation
   * order. Counted per company so that it tells nothing of other companies' requests.
   */
  number: number;
  companyId: string;
  type: "DELETE";
  origin: PrivacyRequestOrigin;
  /** E.164 until processed, then masked (`+*****0001`). */
  subjectPhone?: string;
  /** Lower case until processed, then masked (`a**@example.com`). */
  subjectEmail?: string;
  /** Dropped when processed: it names the subject in the client's system. */
  clientUserId?: string;
  /**
   * Every phone and email pair the subject is known by at the company (the
   * subscribers holding the given phone or email), found when processing starts
   * so a retried job still knows them once the subscribers are gone. Dropped when processed.
   */
  subjects?: Array<{ phone?: string; email?: string }>;
  requestMsg?: string;
  processed: boolean;
  requestedAt: number;
  /** When the processing job is due (the configured delay after the request). */
  dueAt: number;
  processingStartedAt?: number;
  processingEndedAt?: number;
  /** How many records the deletion removed, over every attempt. */
  removedRecords?: number;
}

/**
 * A company's integer id in legacy answers (`affiliateUserId`), random so that
 * it tells nothing of how many companies there are. The id is the company id.
 */
export interface AffiliateRecord extends Doc {
  affiliateUserId: number;
}

export const PRIVACY_REQUESTS = "privacy_requests";
export const AFFILIATES = "privacy_affiliates";

export const privacyCollections: readonly CollectionSpec[] = [
  {
    name: PRIVACY_REQUESTS,
    indexes: [{ fields: ["companyId", "number"], unique: true }, { fields: ["companyId", "requestedAt"] }],
  },
  { name: AFFILIATES, indexes: [{ fields: ["affiliateUserId"], unique: true }] },
];
