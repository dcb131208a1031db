import * as v from "valibot";
import type { ResponseDoc, RouteDocs } from "../../src/index.ts";

const TAG = "Legacy subscribers and messages";
const SAM = "+13125550122";
const JANE = "+13125550100";

const subscriber = {
  id: v.string(),
  phone: v.pipe(v.string(), v.description("E.164")),
  email: v.optional(v.string()),
  firstName: v.optional(v.string()),
  lastName: v.optional(v.string()),
  subscriptions: v.pipe(
    v.array(v.object({ type: v.string(), channel: v.string(), state: v.picklist(["pending", "active", "unsubscribed"]) })),
    v.description("The phone's text subscriptions and their state"),
  ),
};
const added = v.object({ ...subscriber, created: v.boolean(), visitorId: v.optional(v.string()), creativeId: v.optional(v.string()) });
const samView = { id: "731eb438-20e5-4b6c-964e-e86a30a10b0f", phone: SAM, email: "sam@example.com", firstName: "Sam" };

export const addSubscriberDocs: RouteDocs = {
  operationId: "addSubscriber",
  tag: TAG,
  description:
    "Subscribes a phone to the company's marketing texts at once and sends the welcome text with the legal disclosure. " +
    "`email`, `first_name` and other keys may also come inside `metadata` (an object or its JSON text).",
  responses: {
    201: {
      description: "A new subscriber",
      schema: added,
      example: { ...samView, subscriptions: [{ type: "MARKETING", channel: "TEXT", state: "active" }], created: true },
    },
    200: { description: "An existing subscriber (the attempt is recorded again)", schema: added },
  },
  example: { body: { phone: SAM, email: "sam@example.com", metadata: { first_name: "Sam" } } },
};

export const removeSubscriberDocs: RouteDocs = {
  operationId: "removeSubscriber",
  tag: TAG,
  description: "Opts a phone out of the company's texts; the subscriber is kept. With `sendOptOutMessage` (a boolean, or the string \"true\") the unsubscribed text is sent.",
  responses: {
    200: {
      description: "Opted out",
      schema: v.object({ ...subscriber, optOutMessageSent: v.boolean() }),
      example: { ...samView, subscriptions: [{ type: "MARKETING", channel: "TEXT", state: "unsubscribed" }], optOutMessageSent: true },
    },
    400: { description: "Invalid fields, or no subscriber has this phone" },
    409: { description: "The subscriber is opted out already" },
  },
  example: { body: { phone: SAM, sendOptOutMessage: true }, after: ["addSubscriber"] },
};

const notSubscribed: ResponseDoc = { description: "The number is not an active, opted-in subscriber of the company" };

export const transactionalMessageDocs: RouteDocs = {
  operationId: "sendTransactionalMessage",
  tag: TAG,
  description:
    "Sends a transactional SMS (MMS with `mediaUrl`) to an opted-in subscriber: US, Canadian and UK numbers. The company's prefix is prepended and `link` appended; " +
    "the same text to the same number within 5 minutes is not sent again.",
  responses: {
    200: {
      description: "Queued for sending",
      schema: v.object({
        id: v.string(),
        to: v.string(),
        body: v.pipe(v.string(), v.description("The text as sent, prefix included")),
        mediaUrl: v.optional(v.string()),
        status: v.picklist(["queued", "sent", "failed", "suppressed"]),
      }),
      example: { id: "0mm7p6zfs000bd2f0c1e7a9b4", to: JANE, body: "Acme: Your order has shipped: https://shop.example/orders/1001", status: "queued" },
    },
    400: { description: "Invalid fields, or the number is not an active, opted-in subscriber" },
  },
  example: { body: { to: JANE, body: "Your order has shipped: https://shop.example/orders/1001", type: "TRANSACTIONAL" }, after: ["addSubscriptions"] },
};

export const archivedMessageDocs: RouteDocs = {
  operationId: "sendMessage",
  tag: TAG,
  description: "The archived send message endpoint, on the messages host: as the transactional message, answered with `to`, `body` and `messageId` echoed.",
  responses: {
    200: {
      description: "Queued for sending",
      schema: v.object({ to: v.string(), body: v.string(), messageId: v.optional(v.string()) }),
      example: { to: JANE, body: "Your order is ready for pickup: https://shop.example/orders/1001", messageId: "order-1001" },
    },
    404: notSubscribed,
  },
  example: { body: { to: JANE, body: "Your order is ready for pickup: https://shop.example/orders/1001", messageId: "order-1001" }, after: ["addSubscriptions"] },
};
