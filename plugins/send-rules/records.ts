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

export const POLICIES = "send_rules_policies";
export const SENDS = "send_rules_sends";

export const sendRulesCollections: readonly CollectionSpec[] = [
  { name: POLICIES },
  { name: SENDS, indexes: [{ fields: ["companyId", "to", "at"] }] },
];
