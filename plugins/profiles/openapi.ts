import * as v from "valibot";
import type { ResponseDoc, RouteDocs } from "../../src/index.ts";

/** The person of the examples: linked first, then named by any of these. */
const PHONE = "+13125550142";
const EMAIL = "ada@example.com";
const CLIENT_USER_ID = "user-7";
const TAG = "Events and profiles";

const accepted = (description: string): ResponseDoc => ({ description });
const product = {
  productId: "p-1",
  productVariantId: "p-1-blue",
  name: "Mug",
  productUrl: "https://acme.example/p/1",
  productImage: "https://acme.example/p/1.png",
  price: [{ value: 12.5, currency: "USD" }],
  quantity: 1,
};
const userNote =
  "`user` names the person by `phone`, `email` or `externalIdentifiers`; external identifiers alone must already be linked to a phone or an email. " +
  "Identifiers sent together are linked to one profile.";
const timeNote =
  "`occurredAt` (or `occuredAt`) is RFC 3339 or the reference's `+0000` form, the time of receipt when absent; an event older than 12 hours is stored but triggers nothing. " +
  "`externalEventId` makes the event idempotent. Bodies are capped at 64 KiB.";

export const customEventDocs: RouteDocs = {
  operationId: "postCustomEvents",
  tag: TAG,
  description:
    "Records a custom event in the person's timeline. `type` may not contain `\" ' ( ) { } [ ] \\ | ,`; property keys may not contain `\" { } [ ] \\ |`, and an event type has at most 200 distinct keys. " +
    `${userNote} ${timeNote}`,
  responses: { 200: accepted("Recorded (empty body)") },
  example: {
    body: {
      type: "Order Shipped",
      properties: { orderId: "1001", carrier: "UPS" },
      externalEventId: "7f1c9a52-2c1e-4f0b-9a57-0d2f3c4b5a69",
      occurredAt: "2026-03-01T11:38:29+0000",
      user: { externalIdentifiers: { clientUserId: CLIENT_USER_ID } },
    },
    after: ["identify"],
  },
};

const ecommerceDocs = (operationId: string, what: string, body: Record<string, unknown>): RouteDocs => ({
  operationId,
  tag: TAG,
  description: `Records ${what} in the person's timeline: 1 to 100 products, each with at least one price (currency USD unless given). ${userNote} ${timeNote}`,
  responses: { 200: accepted("Recorded (empty body)") },
  example: { body: { items: [product], user: { phone: PHONE }, ...body } },
});

export const productViewDocs = ecommerceDocs("postProductViewEvents", "a product view", {});
export const addToCartDocs = ecommerceDocs("postAddToCartEvents", "an add to cart", { occurredAt: "2026-03-01T11:40:00.000Z" });
export const purchaseDocs = ecommerceDocs("postPurchaseEvents", "a purchase (with `orderId` and `salesChannel`)", {
  orderId: "A-1001",
  salesChannel: { channelType: "WEB" },
});

export const setAttributesDocs: RouteDocs = {
  operationId: "postCustomAttributes",
  tag: TAG,
  description:
    "Sets custom attributes of the person: names of at most 200 characters, values a string (at most 1,024 characters), a number or a boolean (lists and objects are refused). " +
    `The first value a company sets for a name fixes its type. ${userNote}`,
  responses: { 200: accepted("Set (empty body)") },
  example: { body: { properties: { tier: "gold", visits: 3, vip: true }, user: { email: EMAIL } } },
};

export const getAttributesDocs: RouteDocs = {
  operationId: "getCustomAttributes",
  tag: TAG,
  description: "The custom attributes of the person a phone or an email names (exactly one), by name; `[]` for a person the company does not know.",
  query: v.object({
    phone: v.optional(v.pipe(v.string(), v.description("E.164, URL-encoded (%2B for +)"))),
    email: v.optional(v.pipe(v.string(), v.description("An email address, URL-encoded"))),
  }),
  responses: {
    200: {
      description: "The attributes",
      schema: v.array(v.object({ name: v.string(), value: v.union([v.string(), v.number(), v.boolean()]) })),
      example: [
        { name: "tier", value: "gold" },
        { name: "vip", value: true },
        { name: "visits", value: 3 },
      ],
    },
  },
  example: { query: { email: EMAIL }, after: ["postCustomAttributes"] },
};

export const identifyDocs: RouteDocs = {
  operationId: "identify",
  tag: TAG,
  description:
    "Links every identifier given to one profile; profiles that already held some of them are merged into the oldest. " +
    "Needs a phone or an email, or two identifiers to link (a clientUserId or a custom identifier alone is refused). At most 10 requests a second per token.",
  responses: { 202: accepted("Linked (empty body)") },
  example: { body: { phone: PHONE, email: EMAIL, clientUserId: CLIENT_USER_ID, customIdentifiers: [{ name: "loyaltyId", value: "L-9" }] } },
};
