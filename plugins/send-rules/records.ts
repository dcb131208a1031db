import type { CollectionSpec, Doc } from "../../src/index.ts";
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

/**
 * A person's row that a marketing send under the daily cap writes before it
 * counts the day's sends: on a storage whose transactions run side by side
 * (PostgreSQL), two sends to the same person then count one after the other
 * (the second waits for the first's commit) instead of both counting below the
 * cap. The id is the company and the address.
 */
export interface CapFenceRecord extends Doc {
  companyId: string;
  to: string;
}

export const POLICIES = "send_rules_policies";
export const SENDS = "send_rules_sends";
export const CAP_FENCES = "send_rules_cap_fences";

export const sendRulesCollections: readonly CollectionSpec[] = [
  { name: POLICIES },
  { name: SENDS, indexes: [{ fields: ["companyId", "to", "at"] }] },
  { name: CAP_FENCES, indexes: [{ fields: ["companyId", "to"] }] },
];
