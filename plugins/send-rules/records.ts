import type { CollectionSpec, Doc, Migration } from "../../src/index.ts";
import type { QuietHours } from "./quiet-hours.ts";

/** A company's rules for marketing messages; the id is the company id. Absent: the plugin's defaults. */
export interface SendPolicyRecord extends Doc {
  /** IANA zone of the company: the person's zone when neither their profile nor their number gives one. */
  timeZone?: string;
  /** null: no quiet hours. */
  quietHours?: QuietHours | null;
  /** Marketing messages per person per local day; null: no cap. */
  dailyCap?: number | null;
  updatedAt: number;
}

/**
 * One marketing message let through, counted by the daily cap; the id is the
 * company and the message's idempotency key, so a send that runs again is
 * recognised and not counted twice.
 */
export interface SendRecord extends Doc {
  companyId: string;
  /** The person's address: the cap counts what reached it, whoever sent it (a journey knows a profile, a campaign may not). */
  to: string;
  at: number;
}

export const POLICIES = "send_rules_policies";
export const SENDS = "send_rules_sends";
/**
 * Retired: a person's row that a marketing send under the cap wrote on
 * PostgreSQL to count in turn, before `lockKey`. Still declared, so that the
 * table of an older database stays known to the storage (`reachkit
 * migrate-storage` copies every table a data directory ever had); emptied once
 * by the migration `cap-fences-emptied`, as its ids held phone numbers.
 */
export const RETIRED_CAP_FENCES = "send_rules_cap_fences";

export const sendRulesCollections: readonly CollectionSpec[] = [
  { name: POLICIES },
  { name: SENDS, indexes: [{ fields: ["companyId", "to", "at"] }] },
  { name: RETIRED_CAP_FENCES },
];

export const capFencesEmptied: Migration = {
  id: "cap-fences-emptied",
  async up({ storage }) {
    await storage.collection(RETIRED_CAP_FENCES).deleteWhere({});
  },
};
