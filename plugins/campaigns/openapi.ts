import * as v from "valibot";
import type { RouteDocs } from "../../src/index.ts";
import { CAMPAIGN_CHANNELS } from "./campaigns.ts";

const SEGMENTS_TAG = "Segments (reachkit)";
const CAMPAIGNS_TAG = "Campaigns (reachkit)";
/** The ids of the examples (the console's examples name them too). */
export const EXAMPLE_SEGMENT_ID = "01JQ7A0B1C2D3E4F5G6H7J8K9M";
export const EXAMPLE_CAMPAIGN_ID = "01JQ7A0B1C2D3E4F5G6H7J8K9N";
const SEGMENT_ID = EXAMPLE_SEGMENT_ID;
const CAMPAIGN_ID = EXAMPLE_CAMPAIGN_ID;
const SHORT_CODE = "Xy3kP9qR2sT1";
const OWN_SEGMENTS = "reachkit's own API (not the reference service's); scopes `segments:read` and `segments:write`. See docs/campaigns.md.";
const OWN_CAMPAIGNS = "reachkit's own API (not the reference service's); scopes `campaigns:read` and `campaigns:write`. See docs/campaigns.md.";

const segment = v.object({ id: v.string(), name: v.string(), rule: v.record(v.string(), v.unknown()), createdAt: v.number(), updatedAt: v.number() });
const exampleRule = { and: [{ consent: { channel: "TEXT", type: "MARKETING", state: "active" } }, { attribute: { name: "tier", op: "eq", value: "gold" } }] };
const exampleSegment = { id: SEGMENT_ID, name: "Gold members", rule: exampleRule, createdAt: 1772366400000, updatedAt: 1772366400000 };

const variant = v.object({ name: v.string(), text: v.string(), subject: v.optional(v.string()), mediaUrl: v.optional(v.string()), weight: v.number() });
const campaign = v.object({
  id: v.string(),
  name: v.string(),
  segmentId: v.string(),
  channel: v.picklist(CAMPAIGN_CHANNELS),
  variants: v.array(variant),
  link: v.optional(v.string()),
  status: v.picklist(["draft", "scheduled", "sending", "sent", "cancelled"]),
  sendAt: v.optional(v.number()),
  sendAtLocal: v.optional(v.string()),
  audienceDone: v.optional(v.boolean()),
  createdAt: v.number(),
  updatedAt: v.number(),
  startedAt: v.optional(v.number()),
  finishedAt: v.optional(v.number()),
  cancelledAt: v.optional(v.number()),
});
const exampleCampaign = {
  id: CAMPAIGN_ID,
  name: "Spring sale",
  segmentId: SEGMENT_ID,
  channel: "sms",
  variants: [{ name: "A", text: "Spring sale at {companyName}: 20% off today. {link}", weight: 1 }],
  link: "https://shop.example.com/sale",
  status: "draft",
  createdAt: 1772366400000,
  updatedAt: 1772366400000,
};
const counts = v.record(v.string(), v.number());
const variantResults = v.object({
  audience: v.number(), sent: v.number(), pending: v.number(), cancelled: v.number(), skipped: counts, delivered: v.number(), failed: v.number(),
  clicks: v.number(), uniqueClickers: v.number(), optOuts: v.number(), purchases: v.number(), revenue: counts,
});
const exampleVariantResults = { audience: 1, sent: 1, pending: 0, cancelled: 0, skipped: {}, delivered: 0, failed: 0, clicks: 0, uniqueClickers: 0, optOuts: 0, purchases: 0, revenue: {} };

const segmentNotFound = { description: "No segment of the company has this id" };
const campaignNotFound = { description: "No campaign of the company has this id" };
const conflictDoc = (what: string) => ({ description: what });
const segmentParam = { id: "The segment's id (as created)" };
const campaignParam = { id: "The campaign's id (as created)" };

export const createSegmentDocs: RouteDocs = {
  operationId: "createSegment",
  tag: SEGMENTS_TAG,
  description:
    "Creates a segment: a rule over consent (`channel`, `type`, `state`), profile attributes (`name`, `op`, `value`), events (did or did not do one within a window, with property conditions) and the catalog's products (viewed, carted or bought one of a category, collection, brand or tag, within a price range), combined with `and`, `or` and `not`. " +
    `It is evaluated when a campaign sends. At most 200 segments per company (409). ${OWN_SEGMENTS}`,
  responses: { 201: { description: "Created", schema: segment, example: exampleSegment } },
  example: { body: { name: exampleSegment.name, rule: exampleRule } },
};
export const listSegmentsDocs: RouteDocs = {
  operationId: "listSegments",
  tag: SEGMENTS_TAG,
  description: `The company's segments, oldest first. ${OWN_SEGMENTS}`,
  responses: { 200: { description: "The segments", schema: v.object({ segments: v.array(segment) }), example: { segments: [exampleSegment] } } },
  example: { after: ["createSegment"] },
};
export const getSegmentDocs: RouteDocs = {
  operationId: "getSegment",
  tag: SEGMENTS_TAG,
  description: `One segment. ${OWN_SEGMENTS}`,
  params: segmentParam,
  responses: { 200: { description: "The segment", schema: segment, example: exampleSegment }, 404: segmentNotFound },
  example: { params: { id: SEGMENT_ID }, after: ["createSegment"] },
};
export const updateSegmentDocs: RouteDocs = {
  operationId: "updateSegment",
  tag: SEGMENTS_TAG,
  description: `Replaces the name or the rule. ${OWN_SEGMENTS}`,
  params: segmentParam,
  responses: { 200: { description: "The segment as changed", schema: segment, example: { ...exampleSegment, name: "Gold" } }, 404: segmentNotFound },
  example: { params: { id: SEGMENT_ID }, body: { name: "Gold" }, after: ["createSegment"] },
};
export const deleteSegmentDocs: RouteDocs = {
  operationId: "deleteSegment",
  tag: SEGMENTS_TAG,
  description: `Deletes a segment; a campaign still naming it sends to nobody. ${OWN_SEGMENTS}`,
  params: segmentParam,
  responses: { 204: { description: "Deleted (empty body)" }, 404: segmentNotFound },
  example: { params: { id: SEGMENT_ID }, after: ["createSegment"] },
};
export const previewSegmentDocs: RouteDocs = {
  operationId: "previewSegment",
  tag: SEGMENTS_TAG,
  description: `The segment's size now, how many profiles were read to count it, and its first 10 people. ${OWN_SEGMENTS}`,
  params: segmentParam,
  responses: {
    200: {
      description: "The preview",
      schema: v.object({ size: v.number(), scanned: v.number(), sample: v.array(v.object({ profileId: v.string(), phone: v.optional(v.string()), email: v.optional(v.string()) })) }),
      example: { size: 0, scanned: 0, sample: [] },
    },
    404: segmentNotFound,
  },
  example: { params: { id: SEGMENT_ID }, after: ["createSegment"] },
};

export const createCampaignDocs: RouteDocs = {
  operationId: "createCampaign",
  tag: CAMPAIGNS_TAG,
  description:
    "Creates a draft campaign: an SMS, MMS or email to a segment, with one `text` or two to five `variants` (an A/B split by `weight`). " +
    "Texts may use `{firstName}`, `{lastName}`, `{companyName}` and `{link}` (the campaign's `link`, shortened per recipient); every other URL in a text is shortened too. " +
    `At most 1,000 campaigns per company (409). ${OWN_CAMPAIGNS}`,
  responses: { 201: { description: "Created", schema: campaign, example: exampleCampaign } },
  example: { body: { name: exampleCampaign.name, segmentId: SEGMENT_ID, channel: "sms", text: exampleCampaign.variants[0]!.text, link: exampleCampaign.link }, after: ["createSegment"] },
};
export const listCampaignsDocs: RouteDocs = {
  operationId: "listCampaigns",
  tag: CAMPAIGNS_TAG,
  description: `The company's campaigns, oldest first. ${OWN_CAMPAIGNS}`,
  responses: { 200: { description: "The campaigns", schema: v.object({ campaigns: v.array(campaign) }), example: { campaigns: [exampleCampaign] } } },
  example: { after: ["createSegment", "createCampaign"] },
};
export const getCampaignDocs: RouteDocs = {
  operationId: "getCampaign",
  tag: CAMPAIGNS_TAG,
  description: `One campaign. ${OWN_CAMPAIGNS}`,
  params: campaignParam,
  responses: { 200: { description: "The campaign", schema: campaign, example: exampleCampaign }, 404: campaignNotFound },
  example: { params: { id: CAMPAIGN_ID }, after: ["createSegment", "createCampaign"] },
};
export const updateCampaignDocs: RouteDocs = {
  operationId: "updateCampaign",
  tag: CAMPAIGNS_TAG,
  description: `Replaces the fields given of a draft; validated as a whole. ${OWN_CAMPAIGNS}`,
  params: campaignParam,
  responses: { 200: { description: "The campaign as changed", schema: campaign, example: { ...exampleCampaign, name: "Spring sale, day 2" } }, 404: campaignNotFound, 409: conflictDoc("The campaign is no longer a draft") },
  example: { params: { id: CAMPAIGN_ID }, body: { name: "Spring sale, day 2" }, after: ["createSegment", "createCampaign"] },
};
export const deleteCampaignDocs: RouteDocs = {
  operationId: "deleteCampaign",
  tag: CAMPAIGNS_TAG,
  description: `Deletes a draft, sent or cancelled campaign. ${OWN_CAMPAIGNS}`,
  params: campaignParam,
  responses: { 204: { description: "Deleted (empty body)" }, 404: campaignNotFound, 409: conflictDoc("The campaign is scheduled or sending: cancel it first") },
  example: { params: { id: CAMPAIGN_ID }, after: ["createSegment", "createCampaign"] },
};
export const sendCampaignDocs: RouteDocs = {
  operationId: "sendCampaign",
  tag: CAMPAIGNS_TAG,
  description:
    "Sends a draft now (an empty body), at `sendAt` (an instant), or at `sendAtLocal` (a wall-clock time) in each person's time zone. The segment is read when the send starts; " +
    `each message passes the shared send rules (marketing consent now, quiet hours, the daily cap). ${OWN_CAMPAIGNS}`,
  params: campaignParam,
  responses: { 200: { description: "The campaign, scheduled", schema: campaign, example: { ...exampleCampaign, status: "scheduled" } }, 404: campaignNotFound, 409: conflictDoc("The campaign is not a draft") },
  example: { params: { id: CAMPAIGN_ID }, body: { sendAt: "2026-03-05T16:00:00Z" }, after: ["createSegment", "createCampaign"] },
};
export const cancelCampaignDocs: RouteDocs = {
  operationId: "cancelCampaign",
  tag: CAMPAIGNS_TAG,
  description: `Cancels a draft, scheduled or sending campaign: what was not sent yet is not sent. ${OWN_CAMPAIGNS}`,
  params: campaignParam,
  responses: { 200: { description: "The campaign, cancelled", schema: campaign, example: { ...exampleCampaign, status: "cancelled" } }, 404: campaignNotFound, 409: conflictDoc("The campaign is sent") },
  example: { params: { id: CAMPAIGN_ID }, after: ["createSegment", "createCampaign"] },
};
export const estimateCampaignDocs: RouteDocs = {
  operationId: "estimateCampaign",
  tag: CAMPAIGNS_TAG,
  description: `The audience now, how long sending takes at the sender number's messages per second, and a warning when that runs into quiet hours. ${OWN_CAMPAIGNS}`,
  params: campaignParam,
  responses: {
    200: {
      description: "The estimate",
      schema: v.object({ audience: v.number(), messagesPerSecond: v.nullable(v.number()), seconds: v.number(), startsAt: v.string(), endsAt: v.string(), warnings: v.array(v.string()) }),
      example: { audience: 0, messagesPerSecond: 10, seconds: 0, startsAt: "2026-03-02T17:00:00.000Z", endsAt: "2026-03-02T17:00:00.000Z", warnings: [] },
    },
    404: campaignNotFound,
  },
  example: { params: { id: CAMPAIGN_ID }, after: ["createSegment", "createCampaign"] },
};
export const resultsCampaignDocs: RouteDocs = {
  operationId: "getCampaignResults",
  tag: CAMPAIGNS_TAG,
  description:
    "Per campaign and variant: audience, sent, pending, cancelled, skipped by reason, delivered and failed (delivery receipts), clicks and unique clickers, opt-outs within 24 hours of a message, purchases within 7 days of a click (the last clicked message takes them) and their revenue by currency. " +
    OWN_CAMPAIGNS,
  params: campaignParam,
  responses: {
    200: { description: "The results", schema: v.object({ status: v.string(), ...variantResults.entries, variants: v.record(v.string(), variantResults) }), example: { status: "sent", ...exampleVariantResults, variants: { A: exampleVariantResults } } },
    404: campaignNotFound,
  },
  example: { params: { id: CAMPAIGN_ID }, after: ["createSegment", "createCampaign"] },
};
export const createShortLinkDocs: RouteDocs = {
  operationId: "createShortLink",
  tag: CAMPAIGNS_TAG,
  description: `A tracked short link of a URL, on the company's link domain or the server's short host; its clicks are recorded and announced. ${OWN_CAMPAIGNS}`,
  responses: { 201: { description: "Created", schema: v.object({ code: v.string(), shortUrl: v.string(), url: v.string() }), example: { code: SHORT_CODE, shortUrl: `http://localhost:3000/l/${SHORT_CODE}`, url: "https://shop.example.com/sale" } } },
  example: { body: { url: "https://shop.example.com/sale" } },
};
export const shortLinkDocs: RouteDocs = {
  operationId: "followShortLink",
  tag: CAMPAIGNS_TAG,
  description: "Redirects (302) to the link's URL and records the click (`sms.message_link_click` or `email.message_link_click`). An unknown or altered code is a 404.",
  params: { code: "The short code" },
  responses: { 302: { description: "To the link's URL" }, 404: { description: "No such link" } },
  example: { params: { code: SHORT_CODE }, after: ["createShortLink"] },
};
