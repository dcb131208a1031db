import type { CollectionSpec, Doc, LinkContext } from "../../src/index.ts";
import type { SegmentRule } from "./segment-rule.ts";

/** A company's saved audience: a rule evaluated when a campaign sends (and when previewed). */
export interface SegmentRecord extends Doc {
  companyId: string;
  name: string;
  rule: SegmentRule;
  createdAt: number;
  updatedAt: number;
}

export type CampaignChannel = "sms" | "mms" | "email";
/** draft → scheduled → sending → sent; cancelled from any of the first three. */
export type CampaignStatus = "draft" | "scheduled" | "sending" | "sent" | "cancelled";

/** One message of a campaign; two or more make an A/B split, each person getting one by weight. */
export interface CampaignVariant {
  name: string;
  text: string;
  subject?: string;
  mediaUrl?: string;
  /** Relative share of the audience (default 1). */
  weight: number;
}

export interface CampaignRecord extends Doc {
  companyId: string;
  name: string;
  segmentId: string;
  channel: CampaignChannel;
  variants: CampaignVariant[];
  /** The URL `{link}` stands for, shortened per recipient. */
  link?: string;
  status: CampaignStatus;
  /** When it sends: an instant (epoch ms), or with `localTime` the wall-clock time `sendAtLocal` in each person's zone. */
  sendAt?: number;
  sendAtLocal?: string;
  /** Where the audience scan stands (the cursor of the next page of profiles); absent before it starts. */
  audienceCursor?: string;
  /** The audience has been fully read into recipients. */
  audienceDone?: boolean;
  createdAt: number;
  updatedAt: number;
  startedAt?: number;
  finishedAt?: number;
  cancelledAt?: number;
}

/** pending: to send at `dueAt`; sent: in the outbox; skipped: a rule or a macro kept it back; cancelled: the campaign was. */
export type RecipientState = "pending" | "sent" | "skipped" | "cancelled";

/**
 * One person of a campaign's audience; the id is the campaign and the
 * person's address, so a person matched twice (or two profiles sharing a
 * number) is one recipient.
 */
export interface RecipientRecord extends Doc {
  companyId: string;
  campaignId: string;
  profileId: string;
  /** The phone or email the message goes to. */
  address: string;
  variant: string;
  state: RecipientState;
  dueAt: number;
  reason?: string;
  messageId?: string;
  sentAt?: number;
  /** From the message's delivery receipts. */
  delivery?: "delivered" | "failed";
  /** Unsubscribed within 24 hours of the send. */
  optedOutAt?: number;
  /** Attributes as read at planning time (the message's macros and time zone). */
  attributes: Record<string, string | number | boolean>;
}

/** A short link: one per recipient and URL, with what it is for; the id is the code. */
export interface ShortLinkRecord extends Doc, LinkContext {
  companyId: string;
  url: string;
  createdAt: number;
}

export interface ClickRecord extends Doc {
  companyId: string;
  linkId: string;
  campaignId?: string;
  variant?: string;
  recipientId?: string;
  profileId?: string;
  at: number;
}

/** A company's own domain for its short links; the id is the company id. */
export interface LinkDomainRecord extends Doc {
  domain: string;
  updatedAt: number;
}

/** A purchase attributed to the campaign message its buyer clicked last (within 7 days); the id is the campaign and the event. */
export interface PurchaseRecord extends Doc {
  companyId: string;
  campaignId: string;
  variant: string;
  profileId: string;
  total: number;
  currency: string;
  at: number;
}

export const SEGMENTS = "campaigns_segments";
export const CAMPAIGNS = "campaigns_campaigns";
export const RECIPIENTS = "campaigns_recipients";
export const SHORT_LINKS = "campaigns_links";
export const CLICKS = "campaigns_clicks";
export const PURCHASES = "campaigns_purchases";
export const LINK_DOMAINS = "campaigns_link_domains";

export const campaignCollections: readonly CollectionSpec[] = [
  { name: SEGMENTS, indexes: [{ fields: ["companyId", "createdAt"] }] },
  { name: CAMPAIGNS, indexes: [{ fields: ["companyId", "createdAt"] }] },
  {
    name: RECIPIENTS,
    indexes: [
      { fields: ["campaignId", "state", "dueAt"] },
      // The results' counts read these indexes alone (delivery and reason stored in the index, not parsed from each
      // recipient's document): a campaign's figures cost an index range per count, not a read of every recipient.
      { fields: ["campaignId", "variant", "state", "delivery", "reason"] },
      { fields: ["campaignId", "variant", "optedOutAt"], sparse: true },
      { fields: ["companyId", "address", "sentAt"] },
      { fields: ["companyId", "profileId"] },
    ],
  },
  { name: SHORT_LINKS, indexes: [{ fields: ["companyId", "profileId"] }] },
  { name: CLICKS, indexes: [{ fields: ["campaignId", "variant"] }, { fields: ["companyId", "profileId", "at"] }] },
  { name: PURCHASES, indexes: [{ fields: ["campaignId", "variant"] }, { fields: ["companyId", "profileId"] }] },
  { name: LINK_DOMAINS },
];

export const recipientId = (campaignId: string, address: string) => JSON.stringify([campaignId, address]);
