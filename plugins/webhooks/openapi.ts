import * as v from "valibot";
import type { RouteDocs } from "../../src/index.ts";
import { KNOWN_EVENTS } from "./event-catalog.ts";

const TAG = "Webhooks";
/** The webhook id of the examples (the console's examples name it too). */
export const EXAMPLE_WEBHOOK_ID = "0mm7p6zft0000a1b2c3d4e5f6";
const WEBHOOK_ID = EXAMPLE_WEBHOOK_ID;
const URL_EXAMPLE = "https://shop.example/webhooks/reachkit";
const COMPANY_ID = "0mm7p6zfq0000f1e2d3c4b5a6";

const events = v.pipe(v.array(v.string()), v.description(`Event names, case-sensitive: ${KNOWN_EVENTS.join(", ")} (docs/webhooks.md says which are sent yet)`));
const disabledAt = v.pipe(v.nullable(v.string()), v.description("When it was disabled, `YYYY-MM-DD hh:mm:ss` UTC; null while enabled"));
const webhook = v.object({
  id: v.string(),
  url: v.string(),
  events,
  type: v.pipe(v.picklist(["INSTALLED", "CREATOR"]), v.description("INSTALLED: made with an installed application's OAuth token; CREATOR: with the company's own API key")),
  disabledAt,
});
const created = { id: WEBHOOK_ID, url: URL_EXAMPLE, events: ["sms.subscribed", "sms.unsubscribed"], type: "CREATOR", disabledAt: null };
const notFound = { 404: { description: "The caller's application has no webhook with this id at its company" } };

export const listDocs: RouteDocs = {
  operationId: "getWebhooks",
  tag: TAG,
  description: "The webhooks of the caller's application at its company.",
  responses: {
    200: {
      description: "The webhooks, oldest first",
      schema: v.object({
        webhooks: v.array(
          v.object({ id: v.string(), url: v.string(), type: v.pipe(v.literal("SUBSCRIPTION"), v.description("Made through the API")), events, companyId: v.string(), disabledAt }),
        ),
      }),
      example: { webhooks: [{ id: WEBHOOK_ID, url: URL_EXAMPLE, type: "SUBSCRIPTION", events: ["sms.subscribed", "sms.unsubscribed"], companyId: COMPANY_ID, disabledAt: null }] },
    },
  },
  example: { after: ["createWebhook"] },
};

export const createDocs: RouteDocs = {
  operationId: "createWebhook",
  tag: TAG,
  description:
    "Sends the events named to `url` (http or https; not a private or loopback address unless the server allows it) as signed POSTs: " +
    "`x-attentive-hmac-sha256` (hex HMAC-SHA256 of the body with the application's signing key) and the Standard Webhooks headers " +
    "`webhook-id`, `webhook-timestamp`, `webhook-signature`. Failed deliveries are retried for about a day. An unknown event name answers 400 listing the known ones.",
  responses: {
    201: { description: "Created", schema: webhook, example: created },
    409: { description: "The application has a webhook for this URL already, or has as many webhooks as it may" },
  },
  example: { body: { url: URL_EXAMPLE, events: ["sms.subscribed", "sms.unsubscribed"] } },
};

export const updateDocs: RouteDocs = {
  operationId: "updateWebhook",
  tag: TAG,
  description: "Changes any of `url`, `events` and `disabled`. `disabled: false` enables a webhook that was disabled (by the API, a 410 answer, or failing for five days); what it missed is not sent again.",
  params: { webhookId: "The id the create answered" },
  responses: {
    200: { description: "The webhook as it is now", schema: webhook, example: { ...created, events: ["sms.subscribed", "sms.unsubscribed", "email.subscribed"] } },
    ...notFound,
    409: { description: "The application has another webhook for this URL" },
  },
  example: { params: { webhookId: WEBHOOK_ID }, body: { events: ["sms.subscribed", "sms.unsubscribed", "email.subscribed"], disabled: false }, after: ["createWebhook"] },
};

export const deleteDocs: RouteDocs = {
  operationId: "deleteWebhook",
  tag: TAG,
  description: "Deletes a webhook: nothing more is sent to it, deliveries still queued included.",
  params: { webhookId: "The id the create answered" },
  responses: { 204: { description: "Deleted (no body)" }, ...notFound },
  example: { params: { webhookId: WEBHOOK_ID }, after: ["createWebhook", "getWebhooks", "updateWebhook"] },
};
