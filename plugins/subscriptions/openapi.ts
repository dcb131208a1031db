import * as v from "valibot";
import type { ResponseDoc, RouteDocs } from "../../src/index.ts";
import { SUBSCRIPTION_CHANNELS } from "./records.ts";
import { SUBSCRIPTION_TYPES } from "./sign-up-units.ts";

/** The phone and email of the examples; the story of the examples follows Jane. */
const PHONE = "+13125550100";
const EMAIL = "jane@example.com";
/** The company's sender number and inbound secret in the examples (provisioning makes the real ones). */
export const EXAMPLE_SENDER_NUMBER = "+15550100000";
export const EXAMPLE_INBOUND_TOKEN = "4PzoCewHArZzG3pi9nAMGwX3eHe9kzMxEBM_9ZgQW5w";
/** A provider's signature of an inbound webhook, as the SMS adapter checks it. */
export const EXAMPLE_PROVIDER_SIGNATURE = "mvKd7V0c8Jd1cS1G2pGqz3Xk0kI=";

const TAG = "Subscriptions";
const subscription = v.object({ type: v.picklist(SUBSCRIPTION_TYPES), channel: v.picklist(SUBSCRIPTION_CHANNELS) });
const user = v.object({ phone: v.optional(v.string()), email: v.optional(v.string()) });
const externalIdentifiers = v.object({
  clientUserId: v.optional(v.string()),
  shopifyId: v.optional(v.string()),
  klaviyoId: v.optional(v.string()),
  customIdentifiers: v.optional(v.array(v.object({ name: v.string(), value: v.string() }))),
});

const optInAccepted = v.object({
  user,
  externalIdentifiers: v.optional(externalIdentifiers),
  subscriptionResponses: v.array(v.object({ subscription, subscriptionCreationStatus: v.picklist(["NEWLY_CREATED", "PREVIOUSLY_CREATED"]) })),
});
const unsubscribeAccepted = v.object({
  user,
  subscriptionResponses: v.array(v.object({ subscription, subscriptionUnsubscribeStatus: v.picklist(["NEWLY_UNSUBSCRIBED", "PREVIOUSLY_UNSUBSCRIBED"]) })),
});
const eligibilities = v.object({
  subscriptionEligibilities: v.array(v.object({ subscription, eligibility: v.object({ isEligible: v.boolean() }) })),
});

const userQuery = v.object({
  phone: v.optional(v.pipe(v.string(), v.description("E.164, URL-encoded (%2B for +)"))),
  email: v.optional(v.pipe(v.string(), v.description("An email address, URL-encoded"))),
});

const noSignUpUnit: ResponseDoc = { description: "Invalid fields, or no single sign-up unit matches the locale and subscription type: nobody is opted in" };

export const optInDocs: RouteDocs = {
  operationId: "addSubscriptions",
  tag: TAG,
  description:
    "Opts a user in by phone (text) and/or email. Give `signUpSourceId`, or `locale` and `subscriptionType` (exactly one sign-up unit must match). " +
    'Without `singleOptIn` a text subscription waits for the "Y" reply. Processed by a durable job: the answer says what will change.',
  responses: {
    202: {
      description: "Accepted: each subscription is NEWLY_CREATED or PREVIOUSLY_CREATED",
      schema: optInAccepted,
      example: {
        user: { phone: PHONE, email: EMAIL },
        externalIdentifiers: { clientUserId: "user-42" },
        subscriptionResponses: [
          { subscription: { type: "MARKETING", channel: "TEXT" }, subscriptionCreationStatus: "NEWLY_CREATED" },
          { subscription: { type: "MARKETING", channel: "EMAIL" }, subscriptionCreationStatus: "NEWLY_CREATED" },
        ],
      },
    },
    400: noSignUpUnit,
  },
  example: {
    body: {
      user: { phone: PHONE, email: EMAIL },
      locale: { language: "en", country: "US" },
      subscriptionType: "MARKETING",
      singleOptIn: true,
      externalIdentifiers: { clientUserId: "user-42" },
    },
  },
};

export const eligibilityDocs: RouteDocs = {
  operationId: "getSubscriptions",
  tag: TAG,
  description: "Whether a phone and/or an email can receive marketing and transactional messages, per subscription. Give at least one of `phone` and `email`.",
  query: userQuery,
  responses: {
    200: {
      description: "Every subscription of the phone and the email, with its eligibility",
      schema: eligibilities,
      example: { subscriptionEligibilities: [{ subscription: { type: "MARKETING", channel: "TEXT" }, eligibility: { isEligible: true } }] },
    },
  },
  example: { query: { phone: PHONE }, after: ["addSubscriptions"] },
};

export const unsubscribeDocs: RouteDocs = {
  operationId: "unsubscribeSubscriptions",
  tag: TAG,
  description:
    "Unsubscribes a user from the listed subscriptions, or from all when none are listed. A phone selects text subscriptions, an email email subscriptions. Processed by a durable job.",
  responses: {
    202: {
      description: "Accepted: each subscription is NEWLY_UNSUBSCRIBED or PREVIOUSLY_UNSUBSCRIBED",
      schema: unsubscribeAccepted,
      example: {
        user: { email: EMAIL },
        subscriptionResponses: [{ subscription: { type: "MARKETING", channel: "EMAIL" }, subscriptionUnsubscribeStatus: "NEWLY_UNSUBSCRIBED" }],
      },
    },
  },
  example: { body: { user: { email: EMAIL }, subscriptions: [{ type: "MARKETING", channel: "EMAIL" }] }, after: ["addSubscriptions"] },
};

export const optOutDocs: RouteDocs = {
  operationId: "deleteSubscriptions",
  tag: TAG,
  description:
    "Opts a phone out of every text subscription and an email out of every email subscription: the unsubscribe with no list, with the user in the query (one client of the reference service calls it). Give at least one of `phone` and `email`.",
  query: userQuery,
  responses: {
    202: {
      description: "Accepted",
      schema: unsubscribeAccepted,
      example: { user: { phone: "+13125550111" }, subscriptionResponses: [] },
    },
  },
  example: { query: { phone: "+13125550111" } },
};

const inboundForm = v.object({
  From: v.pipe(v.string(), v.description("The subscriber's number")),
  To: v.pipe(v.string(), v.description("The company's sender number")),
  Body: v.optional(v.pipe(v.string(), v.description("The text: Y/YES confirms, STOP opts out, HELP answers, START re-subscribes"))),
  MessageSid: v.optional(v.string()),
});
const inboundResult = v.object({
  received: v.literal(true),
  keyword: v.nullable(v.picklist(["confirm", "stop", "help", "start"])),
  changed: v.pipe(v.number(), v.description("Subscriptions the keyword changed")),
});
const inboundResponses = {
  200: { description: "Received", schema: inboundResult, example: { received: true, keyword: "help", changed: 0 } },
  401: { description: "Neither a valid provider signature nor the company's secret path" },
  403: { description: "The SMS adapter checks signatures, and this one does not match (nor is it the secret path)" },
  404: { description: "No company has this sender number" },
} satisfies Record<number, ResponseDoc>;
const inboundExample = { From: PHONE, To: EXAMPLE_SENDER_NUMBER, Body: "HELP" };
/** Every form field is kept by the route (provider signatures cover them all); these are the ones it reads. */
const inboundBody = { contentType: "application/x-www-form-urlencoded", schema: inboundForm };

export const inboundSignedDocs: RouteDocs = {
  operationId: "receiveInboundText",
  tag: TAG,
  description: "The SMS provider's webhook for texts to a sender number (Twilio's form fields), checked by the SMS adapter's signature.",
  requestBody: inboundBody,
  responses: inboundResponses,
  security: { schemes: { ProviderSignature: { type: "apiKey", in: "header", name: "X-Twilio-Signature", description: "The SMS provider's signature of the request, checked by the SMS adapter" } } },
  example: { body: inboundExample },
};
export const inboundSecretPathDocs: RouteDocs = {
  operationId: "receiveInboundTextAtSecretPath",
  tag: TAG,
  description: "The same webhook at the company's secret path (`reachkit init` prints it), for providers that do not sign their requests.",
  params: { token: "The company's inbound secret" },
  requestBody: inboundBody,
  responses: inboundResponses,
  example: { params: { token: EXAMPLE_INBOUND_TOKEN }, body: inboundExample },
};
