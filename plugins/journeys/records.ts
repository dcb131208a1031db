import type { CollectionSpec, Doc } from "../../src/index.ts";
import type { JourneyDefinition } from "./definition.ts";

export type JourneyStatus = "active" | "paused";

/** A company's journey: its definition, and whether it runs. */
export interface JourneyRecord extends Doc, JourneyDefinition {
  companyId: string;
  status: JourneyStatus;
  /** The template it was installed from. */
  template?: string;
  createdAt: number;
  updatedAt: number;
}

/** The product a journey message is about. */
export interface Subject {
  productId: string;
  variantId: string;
  name?: string;
  link?: string;
  imageUrl?: string;
  /** Formatted with its currency (`$12.50`). */
  price?: string;
}

/** waiting: a step is due (a job holds it); the others are ends. */
export type EnrollmentState = "waiting" | "completed" | "skipped" | "exited";

/**
 * A person in a journey, about one product (or none: welcome, and the
 * abandonment journeys until their send finds the product). The id is the
 * journey, the person and the product, so the same trigger twice finds it;
 * a new entry after the journey's window replaces an ended one.
 */
export interface EnrollmentRecord extends Doc {
  companyId: string;
  journeyId: string;
  profileId: string;
  subject?: Subject;
  state: EnrollmentState;
  /** The step to run next. */
  step: number;
  /** When its step job is due; absent while no job holds it (steps run in the call that entered it). */
  jobAt?: number;
  /** Why it ended, when skipped or exited. */
  reason?: string;
  enteredAt: number;
  updatedAt: number;
  /** When its last message went to the outbox (purchases within 7 days of it count for the journey). */
  sentAt?: number;
}

/** A person asked to hear when a variant is back; answered once, first come first served. */
export interface StockRequestRecord extends Doc {
  companyId: string;
  variantId: string;
  productId?: string;
  profileId: string;
  state: "waiting" | "answered";
  /** requestedAt on 13 digits, then the id: the order requests are answered in. */
  seq: string;
  requestedAt: number;
}

/** A person viewed, carted or bought a variant (the latest time of each), for the price-drop and low-inventory audiences; the id is `interestId`. */
export interface InterestRecord extends Doc {
  companyId: string;
  profileId: string;
  kind: InterestKind;
  at: number;
}

export type InterestKind = "cart" | "purchase" | "view";

export type LogKind = "entered" | "sent" | "skipped" | "deferred" | "exited" | "purchase";

/** One thing that happened in a journey, counted by its stats. Append-only: concurrent writers never contend. */
export interface JourneyLogRecord extends Doc {
  companyId: string;
  journeyId: string;
  profileId: string;
  kind: LogKind;
  reason?: string;
  /** A purchase's order total and currency. */
  total?: number;
  currency?: string;
  at: number;
}

export const JOURNEYS = "journeys_journeys";
export const ENROLLMENTS = "journeys_enrollments";
export const STOCK_REQUESTS = "journeys_stock_requests";
export const INTEREST = "journeys_interest";
export const JOURNEY_LOG = "journeys_log";

export const journeyCollections: readonly CollectionSpec[] = [
  { name: JOURNEYS, indexes: [{ fields: ["companyId", "createdAt"] }] },
  { name: ENROLLMENTS, indexes: [{ fields: ["companyId", "profileId"] }, { fields: ["journeyId", "state"] }] },
  { name: STOCK_REQUESTS, indexes: [{ fields: ["companyId", "variantId", "state", "seq"] }, { fields: ["companyId", "profileId"] }] },
  { name: INTEREST, indexes: [{ fields: ["companyId", "profileId"] }] },
  { name: JOURNEY_LOG, indexes: [{ fields: ["journeyId", "kind", "reason"] }, { fields: ["companyId", "profileId"] }] },
];

/**
 * Interest rows of one variant share an id prefix, and the rows of one person
 * follow each other in it, so a variant's audience is one id range read in
 * order and needs no other index.
 */
export function interestId(companyId: string, variantId: string, profileId: string, kind: InterestKind): string {
  return JSON.stringify([companyId, variantId, profileId, kind]);
}

/** Every id of the variant's interest rows, as a range of the where-language. */
export function variantInterestRange(companyId: string, variantId: string): { gte: string; lt: string } {
  const prefix = `${JSON.stringify([companyId, variantId]).slice(0, -1)},`;
  return { gte: prefix, lt: `${prefix.slice(0, -1)}-` };
}

export function enrollmentId(journeyId: string, profileId: string, subjectKey: string): string {
  return JSON.stringify([journeyId, profileId, subjectKey]);
}

export function stockRequestId(companyId: string, variantId: string, profileId: string): string {
  return JSON.stringify([companyId, variantId, profileId]);
}
