import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { EMAIL_LINKS } from "../../plugins/subscriptions/index.ts";
import type { AnyRoute, InjectResponse } from "../../src/index.ts";
import { OUTBOX_COLLECTION, type OutboxMessage } from "../../src/messaging/outbox-record.ts";
import { CONSOLE_REQUESTS } from "../plugins/console/requests.ts";
import { InstallClient, REDIRECT_URI } from "../support/oauth.ts";
import type { Json } from "../support/test-kit.ts";
import { bodyOf, routeKey, startSecurityKit, type ProvisionedCompany, type SecurityKit } from "./support.ts";

/**
 * DESIGN §8: another company's resource answers exactly as a resource that does
 * not exist. Company B's credentials are sent at company A's ids, phones and
 * emails, and at ones nobody has; both answers must be the same (status, body,
 * counts) but for the echoed value. The table is checked against the kit's
 * routes, so a new route that takes an id, a phone, an email or a query fails
 * here until it has a row.
 */

interface Probe {
  method?: string;
  url: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Bearer token; default B's API key, null for none. */
  token?: string | null;
}

interface World {
  t: SecurityKit;
  a: ProvisionedCompany;
  b: ProvisionedCompany;
  /** A's subscriber phones and emails (index i belongs to row i), and fresh ones no company has, with the same last digits and mask. */
  aPhone(i: number): string;
  freshPhone(i: number): string;
  aEmail(i: number): string;
  freshEmail(i: number): string;
  ids: {
    privacyRequest: string;
    privacyNumber: number;
    upload: string;
    uploadKey: string;
    bUploadUrl: URL;
    type: string;
    message: string;
    reminder: string;
    aClientId: string;
    bClient: { clientId: string; clientSecret: string };
    aCode: string;
    aWebhook: string;
    journey: string;
    segment: string;
    campaign: string;
    shortCode: string;
  };
}

interface Row {
  /** The route, as `METHOD path`. */
  route: string;
  what: string;
  /** B's request at A's resource. */
  onA(w: World, i: number): Probe | Promise<Probe>;
  /** The same request at a resource nobody has; the answers must match. */
  onNothing?(w: World, i: number): Probe | Promise<Probe>;
  /** The values echoed back (A's, nobody's), replaced before comparing. */
  echoes?(w: World, i: number): Array<[string, string]>;
  /** Keys whose values each call generates anew (ids of created records). */
  generated?: string[];
  /** What B's answer on A's resource must be besides equal. */
  expect: "not_found" | "success" | "refused" | ((answer: InjectResponse, w: World) => void | Promise<void>);
}

/** A row whose request names a phone and an email: A's, then fresh ones with the same last digits and mask. */
function bySubject(row: Omit<Row, "onA" | "onNothing" | "echoes"> & { probe(w: World, phone: string, email: string): Probe }): Row {
  return {
    ...row,
    onA: (w, i) => row.probe(w, w.aPhone(i), w.aEmail(i)),
    onNothing: (w, i) => row.probe(w, w.freshPhone(i), w.freshEmail(i)),
    echoes: (w, i) => [
      [w.aPhone(i), w.freshPhone(i)],
      [w.aEmail(i), w.freshEmail(i)],
    ],
  };
}

const json = (method: string, url: string, body: unknown, token?: string | null): Probe => ({ method, url, body, ...(token === undefined ? {} : { token }) });
const form = (url: string, fields: Record<string, string>): Probe => ({
  method: "POST",
  url,
  body: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded" },
  token: null,
});
const legacy = (w: World) => w.b.legacyToken;
/** The path and query of a link B's emails would carry for an address. */
const emailLink = (w: World, purpose: "confirm" | "unsubscribe", email: string) => {
  const links = w.t.kit.resolve(EMAIL_LINKS);
  const url = new URL(purpose === "confirm" ? links.confirmUrl(w.b.companyId, email, "MARKETING") : links.unsubscribeUrl(w.b.companyId, email, "MARKETING"));
  return `${url.pathname}${url.search}`;
};
const phoneQuery = (phone: string) => `phone=${encodeURIComponent(phone)}`;
const emailQuery = (email: string) => `email=${encodeURIComponent(email)}`;
const graphqlUser = (args: string) =>
  `{ viewer { installedApplication { installerCompany { id name user(${args}) { phone email subscriptions { subscriptionEligibilities { subscription { channel type } eligibility { isEligible ineligibilityReason } } }
    externalIdentifiers { clientUserId customIdentifiers { name value } } attributes { name value } events(first: 5) { edges { cursor node { kind type } } } } } } } }`;

const ROWS: Row[] = [
  // Subscriptions and eligibility.
  {
    route: "GET /v1/subscriptions",
    what: "eligibility by A's phone",
    onA: (w, i) => ({ url: `/v1/subscriptions?${phoneQuery(w.aPhone(i))}` }),
    onNothing: (w, i) => ({ url: `/v1/subscriptions?${phoneQuery(w.freshPhone(i))}` }),
    echoes: (w, i) => [[w.aPhone(i), w.freshPhone(i)]],
    expect: (answer) => assert.ok(answer.json<Json>().subscriptionEligibilities.every((entry: Json) => entry.eligibility.isEligible === false)),
  },
  bySubject({
    route: "GET /v1/subscriptions",
    what: "eligibility by A's phone and email",
    probe: (w, phone, email) => ({ url: `/v1/subscriptions?${phoneQuery(phone)}&${emailQuery(email)}` }),
    expect: (answer) => assert.ok(answer.json<Json>().subscriptionEligibilities.every((entry: Json) => entry.eligibility.isEligible === false)),
  }),
  {
    route: "POST /v1/graphql",
    what: "GraphQL user by A's phone",
    onA: (w, i) => json("POST", "/v1/graphql", { query: graphqlUser(`phone: "${w.aPhone(i)}"`) }),
    onNothing: (w, i) => json("POST", "/v1/graphql", { query: graphqlUser(`phone: "${w.freshPhone(i)}"`) }),
    echoes: (w, i) => [[w.aPhone(i), w.freshPhone(i)]],
    expect: (answer, w) => {
      const company = answer.json<Json>().data.viewer.installedApplication.installerCompany;
      assert.deepEqual([company.id, company.name], [w.b.companyId, w.b.companyName]);
    },
  },
  {
    route: "POST /v1/graphql",
    what: "GraphQL user by A's email",
    onA: (w, i) => json("POST", "/v1/graphql", { query: graphqlUser(`email: "${w.aEmail(i)}"`) }),
    onNothing: (w, i) => json("POST", "/v1/graphql", { query: graphqlUser(`email: "${w.freshEmail(i)}"`) }),
    echoes: (w, i) => [[w.aEmail(i), w.freshEmail(i)]],
    expect: "success",
  },
  bySubject({
    route: "POST /v1/subscriptions",
    what: "opt-in of A's phone and email",
    probe: (w, phone, email) => json("POST", "/v1/subscriptions", optIn(phone, email)),
    expect: (answer) => assert.ok(answer.json<Json>().subscriptionResponses.every((r: Json) => r.subscriptionCreationStatus === "NEWLY_CREATED")),
  }),
  bySubject({
    route: "POST /v1/subscriptions/unsubscribe",
    what: "unsubscribe of A's phone and email",
    probe: (w, phone, email) => json("POST", "/v1/subscriptions/unsubscribe", { user: { phone, email } }),
    expect: "success",
  }),
  {
    route: "DELETE /v1/subscriptions",
    what: "opt-out of all texts of A's phone",
    onA: (w, i) => ({ method: "DELETE", url: `/v1/subscriptions?${phoneQuery(w.aPhone(i))}` }),
    onNothing: (w, i) => ({ method: "DELETE", url: `/v1/subscriptions?${phoneQuery(w.freshPhone(i))}` }),
    echoes: (w, i) => [[w.aPhone(i), w.freshPhone(i)]],
    expect: "success",
  },
  {
    route: "DELETE /v1/subscriptions",
    what: "opt-out of all emails of A's email",
    onA: (w, i) => ({ method: "DELETE", url: `/v1/subscriptions?${emailQuery(w.aEmail(i))}` }),
    onNothing: (w, i) => ({ method: "DELETE", url: `/v1/subscriptions?${emailQuery(w.freshEmail(i))}` }),
    echoes: (w, i) => [[w.aEmail(i), w.freshEmail(i)]],
    expect: "success",
  },
  {
    route: "POST /sms/inbound/:token",
    what: "B's webhook path with A's sender number (a STOP from A's subscriber)",
    onA: (w, i) => form(w.b.inboundWebhookPath, { From: w.aPhone(i), To: w.a.senderNumber, Body: "STOP" }),
    onNothing: (w, i) => form(w.b.inboundWebhookPath, { From: w.aPhone(i), To: "+15550009999", Body: "STOP" }),
    echoes: (w) => [[w.a.senderNumber, "+15550009999"]],
    expect: "refused",
  },
  {
    route: "POST /sms/inbound",
    what: "unsigned webhook with A's sender number",
    onA: (w, i) => form("/sms/inbound", { From: w.aPhone(i), To: w.a.senderNumber, Body: "STOP" }),
    onNothing: (w, i) => form("/sms/inbound", { From: w.aPhone(i), To: "+15550009999", Body: "STOP" }),
    echoes: (w) => [[w.a.senderNumber, "+15550009999"]],
    expect: "refused",
  },
  // Profiles: events, attributes and identity name people by phone, email and external ids.
  bySubject({
    route: "POST /v1/events/custom",
    what: "custom event about A's subscriber",
    probe: (w, phone, email) => json("POST", "/v1/events/custom", { type: "Viewed", user: { phone, email } }),
    expect: "success",
  }),
  {
    route: "POST /v1/events/custom",
    what: "custom event naming A's person by A's clientUserId alone",
    onA: (w, i) => json("POST", "/v1/events/custom", { type: "Viewed", user: { externalIdentifiers: { clientUserId: aClientUserId(i) } } }),
    onNothing: (w, i) => json("POST", "/v1/events/custom", { type: "Viewed", user: { externalIdentifiers: { clientUserId: freshClientUserId(i) } } }),
    echoes: (w, i) => [[aClientUserId(i), freshClientUserId(i)]],
    expect: (answer) => assert.equal(answer.status, 400),
  },
  ...["product-view", "add-to-cart", "purchase"].map((path) =>
    bySubject({
      route: `POST /v1/events/ecommerce/${path}`,
      what: `${path} event about A's subscriber`,
      probe: (w, phone, email) => json("POST", `/v1/events/ecommerce/${path}`, { items: [{ productId: "p-1", productVariantId: "v-1", price: [{ value: 5 }] }], user: { phone, email } }),
      expect: "success",
    }),
  ),
  bySubject({
    route: "POST /v1/attributes/custom",
    what: "attributes of A's subscriber (A's types do not bind B)",
    probe: (w, phone, email) => json("POST", "/v1/attributes/custom", { properties: { tier: 3 }, user: { phone, email } }),
    expect: "success",
  }),
  {
    route: "GET /v1/attributes/custom",
    what: "attributes by A's phone",
    onA: (w, i) => ({ url: `/v1/attributes/custom?${phoneQuery(w.aPhone(i))}` }),
    onNothing: (w, i) => ({ url: `/v1/attributes/custom?${phoneQuery(w.freshPhone(i))}` }),
    echoes: (w, i) => [[w.aPhone(i), w.freshPhone(i)]],
    expect: (answer) => assert.deepEqual(answer.json<Json>(), []),
  },
  {
    route: "GET /v1/attributes/custom",
    what: "attributes by A's email",
    onA: (w, i) => ({ url: `/v1/attributes/custom?${emailQuery(w.aEmail(i))}` }),
    onNothing: (w, i) => ({ url: `/v1/attributes/custom?${emailQuery(w.freshEmail(i))}` }),
    echoes: (w, i) => [[w.aEmail(i), w.freshEmail(i)]],
    expect: (answer) => assert.deepEqual(answer.json<Json>(), []),
  },
  bySubject({
    route: "POST /v1/identity-resolution/user-identifiers",
    what: "identity call linking A's phone and email",
    probe: (w, phone, email) => json("POST", "/v1/identity-resolution/user-identifiers", { phone, email, clientUserId: "b-user" }),
    expect: "success",
  }),
  // Legacy subscribers and messages.
  bySubject({
    route: "POST /1/add-subscribers",
    what: "legacy add of A's phone",
    probe: (w, phone, email) => json("POST", "/1/add-subscribers", { phone, email }, legacy(w)),
    generated: ["id"],
    expect: (answer) => assert.equal(answer.status, 201),
  }),
  {
    route: "POST /1/subscribers/unsubscribe",
    what: "legacy remove of A's subscriber",
    onA: (w, i) => json("POST", "/1/subscribers/unsubscribe", { phone: w.aPhone(i), sendOptOutMessage: true }, legacy(w)),
    onNothing: (w, i) => json("POST", "/1/subscribers/unsubscribe", { phone: w.freshPhone(i), sendOptOutMessage: true }, legacy(w)),
    echoes: (w, i) => [[w.aPhone(i), w.freshPhone(i)]],
    expect: (answer) => assert.equal(answer.json<Json>().error.code, "no_subscriber"),
  },
  {
    route: "POST /1/messages",
    what: "transactional message to A's subscriber",
    onA: (w, i) => json("POST", "/1/messages", { to: w.aPhone(i), body: "Your order shipped", type: "TRANSACTIONAL" }, legacy(w)),
    onNothing: (w, i) => json("POST", "/1/messages", { to: w.freshPhone(i), body: "Your order shipped", type: "TRANSACTIONAL" }, legacy(w)),
    echoes: (w, i) => [[w.aPhone(i), w.freshPhone(i)]],
    expect: (answer) => assert.equal(answer.json<Json>().error.code, "not_subscribed"),
  },
  {
    route: "POST /v1/messages",
    what: "archived message to A's subscriber",
    onA: (w, i) => json("POST", "/v1/messages", { to: w.aPhone(i), body: "Your order shipped" }, legacy(w)),
    onNothing: (w, i) => json("POST", "/v1/messages", { to: w.freshPhone(i), body: "Your order shipped" }, legacy(w)),
    echoes: (w, i) => [[w.aPhone(i), w.freshPhone(i)]],
    expect: "not_found",
  },
  // Privacy requests.
  {
    route: "GET /v1/privacy/delete-request/:id",
    what: "A's privacy request by id",
    onA: (w) => ({ url: `/v1/privacy/delete-request/${w.ids.privacyRequest}` }),
    onNothing: () => ({ url: `/v1/privacy/delete-request/${randomUUID()}` }),
    expect: "not_found",
  },
  {
    route: "GET /v1/privacy/delete-request/:id",
    what: "A's privacy request by its legacy integer id",
    onA: (w) => ({ url: `/v1/privacy/delete-request/${w.ids.privacyNumber}` }),
    onNothing: () => ({ url: "/v1/privacy/delete-request/987654321" }),
    expect: "not_found",
  },
  bySubject({
    route: "POST /v1/privacy/delete-request",
    what: "deletion request for A's subscriber (B's data only is deleted)",
    probe: (w, phone, email) => json("POST", "/v1/privacy/delete-request", { subjectPhone: phone, subjectEmail: email }),
    generated: ["id"],
    expect: "success",
  }),
  bySubject({
    route: "POST /privacy/delete-request",
    what: "legacy deletion request for A's subscriber",
    probe: (w, phone, email) => json("POST", "/privacy/delete-request", { subjectPhone: phone, subjectEmail: email }, legacy(w)),
    generated: ["id"],
    expect: "success",
  }),
  // Journeys.
  ...(
    [
      ["GET /v1/journeys/:id", "A's journey", "GET", ""],
      ["PUT /v1/journeys/:id", "a change to A's journey", "PUT", ""],
      ["POST /v1/journeys/:id/pause", "pausing A's journey", "POST", "/pause"],
      ["POST /v1/journeys/:id/resume", "resuming A's journey", "POST", "/resume"],
      ["DELETE /v1/journeys/:id", "deleting A's journey", "DELETE", ""],
      ["GET /v1/journeys/:id/stats", "the figures of A's journey", "GET", "/stats"],
    ] as const
  ).map(
    ([route, what, method, tail]): Row => ({
      route,
      what,
      onA: (w) => ({ method, url: `/v1/journeys/${w.ids.journey}${tail}`, ...(method === "PUT" ? { body: { window: "P2D" } } : {}) }),
      onNothing: () => ({ method, url: `/v1/journeys/${NOWHERE}${tail}`, ...(method === "PUT" ? { body: { window: "P2D" } } : {}) }),
      expect: "not_found",
    }),
  ),
  {
    route: "GET /v1/journeys",
    what: "the journey list holds none of A's journeys",
    onA: () => ({ url: "/v1/journeys" }),
    expect: (answer, w) => assert.ok(!answer.json<Json>().journeys.some((journey: Json) => journey.id === w.ids.journey)),
  },
  // Segments and campaigns.
  ...(
    [
      ["GET /v1/segments/:id", "A's segment", "GET", "segments", ""],
      ["PUT /v1/segments/:id", "a change to A's segment", "PUT", "segments", ""],
      ["DELETE /v1/segments/:id", "deleting A's segment", "DELETE", "segments", ""],
      ["GET /v1/segments/:id/preview", "the size and people of A's segment", "GET", "segments", "/preview"],
      ["GET /v1/campaigns/:id", "A's campaign", "GET", "campaigns", ""],
      ["PUT /v1/campaigns/:id", "a change to A's campaign", "PUT", "campaigns", ""],
      ["DELETE /v1/campaigns/:id", "deleting A's campaign", "DELETE", "campaigns", ""],
      ["POST /v1/campaigns/:id/send", "sending A's campaign", "POST", "campaigns", "/send"],
      ["POST /v1/campaigns/:id/cancel", "cancelling A's campaign", "POST", "campaigns", "/cancel"],
      ["GET /v1/campaigns/:id/estimate", "the estimate of A's campaign", "GET", "campaigns", "/estimate"],
      ["GET /v1/campaigns/:id/results", "the results of A's campaign", "GET", "campaigns", "/results"],
    ] as const
  ).map(
    ([route, what, method, kind, tail]): Row => ({
      route,
      what,
      onA: (w) => ({ method, url: `/v1/${kind}/${kind === "segments" ? w.ids.segment : w.ids.campaign}${tail}`, ...(method === "PUT" || tail === "/send" ? { body: method === "PUT" ? { name: "B's" } : {} } : {}) }),
      onNothing: () => ({ method, url: `/v1/${kind}/${NOWHERE}${tail}`, ...(method === "PUT" || tail === "/send" ? { body: method === "PUT" ? { name: "B's" } : {} } : {}) }),
      expect: "not_found",
    }),
  ),
  {
    route: "GET /v1/segments",
    what: "the segment list holds none of A's segments",
    onA: () => ({ url: "/v1/segments" }),
    expect: (answer, w) => assert.ok(!answer.json<Json>().segments.some((segment: Json) => segment.id === w.ids.segment)),
  },
  {
    route: "GET /v1/campaigns",
    what: "the campaign list holds none of A's campaigns",
    onA: () => ({ url: "/v1/campaigns" }),
    expect: (answer, w) => assert.ok(!answer.json<Json>().campaigns.some((campaign: Json) => campaign.id === w.ids.campaign)),
  },
  {
    route: "POST /v1/campaigns",
    what: "a campaign of B's to A's segment",
    onA: (w) => json("POST", "/v1/campaigns", { name: "B's", segmentId: w.ids.segment, channel: "sms", text: "Hi" }),
    onNothing: () => json("POST", "/v1/campaigns", { name: "B's", segmentId: NOWHERE, channel: "sms", text: "Hi" }),
    expect: (answer) => {
      assert.equal(answer.status, 400, answer.body);
      assert.deepEqual(answer.json<Json>().error.details.map((detail: Json) => detail.path), ["segmentId"]);
    },
  },
  {
    route: "GET /l/:code",
    what: "A's short link with its code altered (a code is its only name: an HMAC under the kit's secret)",
    onA: (w) => ({ url: `/l/${w.ids.shortCode.slice(0, -1)}${w.ids.shortCode.endsWith("A") ? "B" : "A"}`, token: null }),
    onNothing: () => ({ url: "/l/AAAAAAAAAAAA", token: null }),
    expect: "not_found",
  },
  // Catalog uploads.
  {
    route: "GET /v1/product-catalog/uploads/:uploadId",
    what: "A's catalog upload",
    onA: (w) => ({ url: `/v1/product-catalog/uploads/${w.ids.upload}` }),
    onNothing: () => ({ url: `/v1/product-catalog/uploads/${randomUUID()}` }),
    expect: "not_found",
  },
  {
    route: "GET /v1/product-catalog/uploads",
    what: "the upload list holds none of A's uploads",
    onA: () => ({ url: "/v1/product-catalog/uploads" }),
    expect: (answer, w) => {
      const ids = answer.json<Json[]>().map((upload) => upload.uploadId);
      assert.ok(ids.length === 1 && !ids.includes(w.ids.upload), `B sees ${ids}`);
    },
  },
  {
    route: "PUT /uploads/:key",
    what: "B's upload signature on A's upload key",
    onA: (w) => ({ method: "PUT", url: `/uploads/${encodeURIComponent(w.ids.uploadKey)}${w.ids.bUploadUrl.search}`, body: "{}\n", token: null }),
    onNothing: (w) => ({ method: "PUT", url: `/uploads/${encodeURIComponent(`catalog/${randomUUID()}`)}${w.ids.bUploadUrl.search}`, body: "{}\n", token: null }),
    expect: (answer) => assert.equal(answer.status, 403),
  },
  // The links of subscriber emails: signed by the kit for one company, B's link about A's subscriber acts at B only.
  {
    route: "GET /email/confirm",
    what: "B's confirmation link for A's subscriber's address",
    onA: (w, i) => ({ url: emailLink(w, "confirm", w.aEmail(i)), token: null }),
    expect: (answer) => {
      assert.equal(answer.status, 404);
      assert.match(answer.body, /Nothing to confirm/);
    },
  },
  {
    route: "GET /email/unsubscribe",
    what: "B's unsubscribe link for A's subscriber's address",
    onA: (w, i) => ({ url: emailLink(w, "unsubscribe", w.aEmail(i)), token: null }),
    expect: (answer, w) => {
      assert.equal(answer.status, 200);
      assert.ok(answer.body.includes(w.b.companyName), answer.body);
    },
  },
  {
    route: "POST /email/unsubscribe",
    what: "B's one-click unsubscribe of A's subscriber's address",
    onA: (w, i) => ({ ...form(emailLink(w, "unsubscribe", w.aEmail(i)), { "List-Unsubscribe": "One-Click" }) }),
    expect: (answer, w) => {
      assert.equal(answer.status, 200);
      assert.ok(answer.body.includes(w.b.companyName), answer.body);
    },
  },
  {
    route: "GET /docs/assets/:file",
    what: "a file of the API reference page, the same for every caller",
    onA: () => ({ url: "/docs/assets/swagger-ui.css" }),
    expect: "success",
  },
  // Appointments and reminders.
  {
    route: "GET /events/types/:uuid",
    what: "A's appointment type",
    onA: (w) => json("GET", `/events/types/${w.ids.type}`, undefined, legacy(w)),
    onNothing: (w) => json("GET", `/events/types/${NOWHERE}`, undefined, legacy(w)),
    echoes: (w) => [[w.ids.type, NOWHERE]],
    expect: "not_found",
  },
  {
    route: "POST /events/types/messages",
    what: "a message for A's appointment type",
    onA: (w) => json("POST", "/events/types/messages", { eventType: { uuid: w.ids.type }, messageType: "NO_SHOW", text: "Missed you" }, legacy(w)),
    onNothing: (w) => json("POST", "/events/types/messages", { eventType: { uuid: NOWHERE }, messageType: "NO_SHOW", text: "Missed you" }, legacy(w)),
    echoes: (w) => [[w.ids.type, NOWHERE]],
    expect: (answer) => assert.equal(answer.status, 400),
  },
  {
    route: "GET /events/types/messages/:uuid",
    what: "A's appointment message",
    onA: (w) => json("GET", `/events/types/messages/${w.ids.message}`, undefined, legacy(w)),
    onNothing: (w) => json("GET", `/events/types/messages/${NOWHERE}`, undefined, legacy(w)),
    echoes: (w) => [[w.ids.message, NOWHERE]],
    expect: "not_found",
  },
  {
    route: "PUT /events/types/messages/:uuid",
    what: "an update of A's appointment message",
    onA: (w) => json("PUT", `/events/types/messages/${w.ids.message}`, { text: "Changed by B" }, legacy(w)),
    onNothing: (w) => json("PUT", `/events/types/messages/${NOWHERE}`, { text: "Changed by B" }, legacy(w)),
    echoes: (w) => [[w.ids.message, NOWHERE]],
    expect: "not_found",
  },
  {
    route: "POST /events/reminders",
    what: "a reminder on A's appointment type",
    onA: (w, i) => json("POST", "/events/reminders", reminderBody(w.ids.type, w.aPhone(i)), legacy(w)),
    onNothing: (w, i) => json("POST", "/events/reminders", reminderBody(NOWHERE, w.aPhone(i)), legacy(w)),
    echoes: (w) => [[w.ids.type, NOWHERE]],
    expect: (answer) => assert.equal(answer.status, 400),
  },
  ...(["GET", "PUT"] as const).map(
    (method): Row => ({
      route: `${method} /events/reminders/:uuid`,
      what: `${method} of A's reminder`,
      onA: (w) => json(method, `/events/reminders/${w.ids.reminder}`, method === "PUT" ? { firstName: "Eve" } : undefined, legacy(w)),
      onNothing: (w) => json(method, `/events/reminders/${NOWHERE}`, method === "PUT" ? { firstName: "Eve" } : undefined, legacy(w)),
      echoes: (w) => [[w.ids.reminder, NOWHERE]],
      expect: "not_found",
    }),
  ),
  ...(["cancel", "no-show"] as const).map(
    (action): Row => ({
      route: `POST /events/reminders/:uuid/${action}`,
      what: `${action} of A's reminder`,
      onA: (w) => json("POST", `/events/reminders/${w.ids.reminder}/${action}`, undefined, legacy(w)),
      onNothing: (w) => json("POST", `/events/reminders/${NOWHERE}/${action}`, undefined, legacy(w)),
      echoes: (w) => [[w.ids.reminder, NOWHERE]],
      expect: "not_found",
    }),
  ),
  // Webhooks.
  {
    route: "GET /v1/webhooks",
    what: "the webhook list holds none of A's webhooks",
    onA: () => ({ url: "/v1/webhooks" }),
    expect: (answer, w) => assert.ok(answer.json<Json>().webhooks.every((webhook: Json) => webhook.companyId === w.b.companyId && webhook.id !== w.ids.aWebhook), answer.body),
  },
  {
    route: "POST /v1/webhooks",
    what: "a webhook at the URL of A's webhook (B's own, signed with B's key)",
    onA: () => json("POST", "/v1/webhooks", { url: A_WEBHOOK_URL, events: ["sms.subscribed"] }),
    onNothing: () => json("POST", "/v1/webhooks", { url: "https://nobody.example/hooks", events: ["sms.subscribed"] }),
    echoes: () => [[A_WEBHOOK_URL, "https://nobody.example/hooks"]],
    generated: ["id"],
    expect: (answer) => assert.equal(answer.status, 201),
  },
  ...(["PUT", "DELETE"] as const).map(
    (method): Row => ({
      route: `${method} /v1/webhooks/:webhookId`,
      what: `${method} of A's webhook`,
      onA: (w) => json(method, `/v1/webhooks/${w.ids.aWebhook}`, method === "PUT" ? { disabled: true } : undefined),
      onNothing: () => json(method, `/v1/webhooks/${NOWHERE}`, method === "PUT" ? { disabled: true } : undefined),
      echoes: (w) => [[w.ids.aWebhook, NOWHERE]],
      expect: "not_found",
    }),
  ),
  // OAuth: codes, sign-in and install.
  {
    route: "POST /v1/authorization-codes/tokens",
    what: "B's client exchanging a code issued to A's install",
    onA: (w) => tokenForm(w.ids.bClient, w.ids.aCode),
    onNothing: (w) => tokenForm(w.ids.bClient, `rk_code_${randomUUID()}`),
    expect: (answer) => assert.equal(answer.json<Json>().error, "invalid_grant"),
  },
  {
    route: "POST /integrations/oauth-install/login",
    what: "sign-in as A's dashboard user with a wrong password",
    onA: async (w) => loginForm(w, A_USER_EMAIL),
    onNothing: async (w) => loginForm(w, "nobody@acme.example"),
    echoes: () => [[A_USER_EMAIL, "nobody@acme.example"]],
    expect: (answer) => assert.equal(answer.status, 401),
  },
];

const NOWHERE = "00000000-0000-4000-8000-000000000000";
const A_WEBHOOK_URL = "https://a.example/hooks";
/** A's people carry clientUserIds; fresh ones belong to nobody. */
const aClientUserId = (i: number) => `a-client-${i}`;
const freshClientUserId = (i: number) => `z-client-${i}`;
const A_USER_EMAIL = "owner@acme.example";
const B_USER_EMAIL = "owner@globex.example";
const PASSWORD = "correct horse battery";

/** Routes no tenant resource can be named on, each with the reason. Routes with a path parameter or a query may not be here. */
const NAMES_NO_RESOURCE: Record<string, string> = {
  "GET /v1/me": "answers the caller's own company; takes no input",
  "POST /v1/product-catalog/uploads": "creates an upload of the caller's company; its only field is validateOnly",
  "POST /events/types": "creates a type of the caller's company from a name",
  "POST /v1/journeys": "creates a journey of the caller's company from a definition that names no person or resource",
  "POST /v1/segments": "creates a segment of the caller's company from a rule over its own people",
  "POST /v1/short-links": "shortens a URL the caller gives, for the caller's company",
  "GET /openapi.json": "the kit's OpenAPI document, the same for every caller; takes no input",
  "GET /docs": "the API reference page, the same for every caller; takes no input",
};

/**
 * Routes proven by their own test rather than by a row: the install pages act
 * for the signed-in user's company (below), and so does every console page and
 * action, which test/plugins/console/tenancy.test.ts walks as a user of
 * company B with company A's ids.
 */
const OWN_TEST = ["GET /integrations/oauth-install", "POST /integrations/oauth-install", ...Object.keys(CONSOLE_REQUESTS)];

const optIn = (phone: string, email: string) => ({ user: { phone, email }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING", singleOptIn: true });

const reminderBody = (type: string, phone: string) => ({
  eventType: { uuid: type },
  phone,
  eventDateTime: "2026-03-08T15:00:00",
  subscriberTimeZone: "America/New_York",
});

const tokenForm = (client: { clientId: string; clientSecret: string }, code: string): Probe => ({
  ...form("/v1/authorization-codes/tokens", {
    grant_type: "authorization_code",
    code,
    redirect_uri: REDIRECT_URI,
    client_id: client.clientId,
    client_secret: client.clientSecret,
  }),
});

/** The sign-in form posted from a fresh browser (same CSRF cookie for both), wrong password. */
async function loginForm(w: World, email: string): Promise<Probe> {
  const csrfCookie = "c".repeat(43);
  const installUrl = new URL(w.t.kit.plugin("oauth").installUrl({ clientId: w.ids.aClientId, redirectUri: REDIRECT_URI, state: "s" }));
  const page = await w.t.as(null, { url: `${installUrl.pathname}${installUrl.search}`, headers: { cookie: `rk_csrf=${csrfCookie}` } });
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)?.[1] ?? "";
  const fields = { csrf_token: csrf, client_id: w.ids.aClientId, redirect_uri: REDIRECT_URI, state: "s", email, password: "not the password" };
  return { ...form("/integrations/oauth-install/login", fields), headers: { "content-type": "application/x-www-form-urlencoded", cookie: `rk_csrf=${csrfCookie}` } };
}

/** What two answers may differ in: trace ids, the echoed value, and the ids a create generates. */
function comparable(response: InjectResponse, echoes: Array<[string, string]>, generated: readonly string[]): Json {
  let text = response.body;
  for (const [aValue, nothing] of echoes) {
    for (const value of [aValue, nothing, encodeURIComponent(aValue), encodeURIComponent(nothing)]) {
      if (value !== "") text = text.split(value).join("<echo>");
    }
  }
  const body = bodyOf({ ...response, body: text });
  const scrub = (value: Json): Json => {
    if (Array.isArray(value)) return value.map(scrub);
    if (value === null || typeof value !== "object") return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, field]) => [key, generated.includes(key) || key === "traceId" ? "<generated>" : key === "error" && field && typeof field === "object" ? { ...scrub(field), id: "<trace>" } : scrub(field)]),
    );
  };
  return { status: response.status, contentType: response.headers["content-type"], body: scrub(body) };
}

function send(w: World, probe: Probe): Promise<InjectResponse> {
  const token = probe.token === undefined ? w.b.apiKey : probe.token;
  return w.t.as(token, { method: probe.method ?? "GET", url: probe.url, body: probe.body, headers: probe.headers });
}

const takesInput = (route: AnyRoute) => route.path.includes(":") || route.query !== undefined || route.method === "GET" || route.body !== undefined;

describe("tenant isolation: company B's credentials on company A's resources", () => {
  let t: SecurityKit;
  let w: World;
  /** A's view of its own data before B's requests. */
  let before_: Json;

  /** Everything A can read about its data; must not change whatever B sends. */
  async function aSnapshot(): Promise<Json> {
    const asA = (url: string, token = w.a.apiKey) => t.as(token, { url }).then((response) => ({ status: response.status, body: bodyOf(response) }));
    const eligibility = [];
    for (let i = 0; i < ROWS.length; i++) {
      eligibility.push(await asA(`/v1/subscriptions?${phoneQuery(w.aPhone(i))}&${emailQuery(w.aEmail(i))}`));
    }
    return {
      eligibility,
      privacy: await asA(`/v1/privacy/delete-request/${w.ids.privacyRequest}`),
      upload: await asA(`/v1/product-catalog/uploads/${w.ids.upload}`),
      uploads: await asA("/v1/product-catalog/uploads"),
      journey: await asA(`/v1/journeys/${w.ids.journey}`),
      segment: await asA(`/v1/segments/${w.ids.segment}`),
      campaign: await asA(`/v1/campaigns/${w.ids.campaign}`),
      product: await t.kit.plugin("catalog").getProduct(w.a.companyId, "p-1"),
      type: await asA(`/events/types/${w.ids.type}`, w.a.legacyToken),
      message: await asA(`/events/types/messages/${w.ids.message}`, w.a.legacyToken),
      reminder: await asA(`/events/reminders/${w.ids.reminder}`, w.a.legacyToken),
      webhooks: await asA("/v1/webhooks"),
      outbox: (await t.kit.storage.collection<OutboxMessage>(OUTBOX_COLLECTION).find({ where: { companyId: w.a.companyId }, limit: 10_000 })).items.length,
      attributes: await Promise.all(ROWS.map((_, i) => asA(`/v1/attributes/custom?${emailQuery(w.aEmail(i))}`))),
      profiles: await Promise.all(ROWS.map((_, i) => profileOf(t, w.a.companyId, w.aPhone(i)))),
    };
  }

  before(async () => {
    t = await startSecurityKit();
    const a = await t.provision("Acme Two");
    const b = await t.provision("Globex");
    const suffix = (i: number) => String(100 + i).padStart(4, "0");
    w = {
      t,
      a,
      b,
      aPhone: (i) => `+1914844${suffix(i)}`,
      freshPhone: (i) => `+1914845${suffix(i)}`,
      aEmail: (i) => `ada${i}@example.com`,
      freshEmail: (i) => `amy${i}@example.com`,
      ids: {} as World["ids"],
    };
    const asA = async (probe: Probe) => {
      const response = await send(w, { token: a.apiKey, ...probe });
      assert.ok(response.status < 300, `A's setup ${probe.method} ${probe.url}: ${response.status} ${response.body}`);
      return response.body === "" ? {} : response.json<Json>();
    };
    // A has an active subscriber per row (phone and email), a legacy sign-up and a transactional message.
    for (let i = 0; i < ROWS.length; i++) await asA(json("POST", "/v1/subscriptions", optIn(w.aPhone(i), w.aEmail(i))));
    // Each of A's people has a profile: identifiers, an attribute, an event.
    for (let i = 0; i < ROWS.length; i++) {
      const user = { phone: w.aPhone(i), email: w.aEmail(i), externalIdentifiers: { clientUserId: aClientUserId(i) } };
      await asA(json("POST", "/v1/attributes/custom", { properties: { tier: "gold" }, user }));
      await asA(json("POST", "/v1/events/custom", { type: "Order Shipped", user }));
    }
    await t.scheduler.flush();
    await asA(json("POST", "/1/add-subscribers", { phone: "+19148449999" }, a.legacyToken));
    await asA(json("POST", "/1/messages", { to: w.aPhone(0), body: "A's order shipped", type: "TRANSACTIONAL" }, a.legacyToken));
    // Privacy requests (about nobody else's data), a catalog with a product, an appointment type, message and reminder.
    const privacyRequest = (await asA(json("POST", "/v1/privacy/delete-request", { subjectPhone: "+19148449998" }))).id;
    for (let n = 0; n < 3; n++) await asA(json("POST", "/privacy/delete-request", { subjectEmail: `gone${n}@example.com` }, a.legacyToken));
    const privacyNumber = (await asA(json("POST", "/privacy/delete-request", { subjectEmail: "gone@example.com" }, a.legacyToken))).id;
    const journey = (await asA(json("POST", "/v1/journeys", { template: "cart_abandonment" }))).id;
    const segment = (await asA(json("POST", "/v1/segments", { name: "A's gold", rule: { attribute: { name: "tier", op: "eq", value: "gold" } } }))).id;
    const campaign = (await asA(json("POST", "/v1/campaigns", { name: "A's sale", segmentId: segment, channel: "sms", text: "A's sale" }))).id;
    const shortCode = (await asA(json("POST", "/v1/short-links", { url: "https://a.example/sale" }))).code;
    const upload = await asA(json("POST", "/v1/product-catalog/uploads", {}));
    const uploadUrl = new URL(upload.uploadUrl);
    const product = { id: "p-1", name: "A's product", link: "https://a.example/p-1", lastUpdated: "2026-02-01T10:00:00Z", variants: [{ id: "p-1-v1", name: "A's variant", link: "https://a.example/v", prices: [{ currencyCode: "USD", amount: "20.00" }], availableForPurchase: true, lastUpdated: "2026-02-01T10:00:00Z" }] };
    assert.equal((await send(w, { method: "PUT", url: `${uploadUrl.pathname}${uploadUrl.search}`, body: `${JSON.stringify(product)}\n`, token: null })).status, 200);
    const type = (await asA(json("POST", "/events/types", { type: "Haircut" }, a.legacyToken))).uuid;
    const message = (await asA(json("POST", "/events/types/messages", { eventType: { uuid: type }, messageType: "REMINDER", text: "Soon" }, a.legacyToken))).uuid;
    const reminder = (await asA(json("POST", "/events/reminders", reminderBody(type, w.aPhone(0)), a.legacyToken))).uuid;
    const aWebhook = (await asA(json("POST", "/v1/webhooks", { url: A_WEBHOOK_URL, events: ["sms.subscribed"] }))).id;
    await t.scheduler.flush();
    // B has an upload of its own (its signed URL) and a public OAuth application; A installs A's application.
    const bUpload = await send(w, json("POST", "/v1/product-catalog/uploads", {}));
    const oauth = t.kit.plugin("oauth");
    const scopes = ["subscriptions:read"] as const;
    const aApp = await oauth.applications.create({ companyId: a.companyId, name: "A's app", redirectUris: [REDIRECT_URI], scopes: [...scopes] });
    const bApp = await oauth.applications.create({ companyId: b.companyId, name: "B's app", redirectUris: [REDIRECT_URI], scopes: [...scopes] });
    await oauth.users.create({ companyId: a.companyId, email: A_USER_EMAIL, password: PASSWORD });
    await oauth.users.create({ companyId: b.companyId, email: B_USER_EMAIL, password: PASSWORD });
    const aCode = await authorize(t, aApp.application.clientId, A_USER_EMAIL);
    w.ids = {
      journey,
      segment,
      campaign,
      shortCode,
      privacyRequest,
      privacyNumber,
      upload: upload.uploadId,
      uploadKey: decodeURIComponent(uploadUrl.pathname.slice("/uploads/".length)),
      bUploadUrl: new URL(bUpload.json<Json>().uploadUrl),
      type,
      message,
      reminder,
      aClientId: aApp.application.clientId,
      bClient: { clientId: bApp.application.clientId, clientSecret: bApp.clientSecret },
      aCode,
      aWebhook,
    };
    (w.ids as Json).aClientSecret = aApp.clientSecret;
    before_ = await aSnapshot();
  });

  after(() => t.stop());

  it("has a row (or a stated reason) for every route, and one for each route that takes an id, a phone, an email or a query", () => {
    const keys = t.routes.map(routeKey);
    const covered = new Set([...ROWS.map((row) => row.route), ...OWN_TEST]);
    const missing = t.routes.filter((route) => !covered.has(routeKey(route)) && !(routeKey(route) in NAMES_NO_RESOURCE));
    assert.deepEqual(missing.map(routeKey), [], "routes with neither a row in ROWS nor a reason in NAMES_NO_RESOURCE");
    const excusedButTakingInput = t.routes.filter((route) => routeKey(route) in NAMES_NO_RESOURCE && (route.path.includes(":") || route.query !== undefined));
    assert.deepEqual(excusedButTakingInput.map(routeKey), [], "a route with a path parameter or a query needs a row");
    assert.deepEqual([...covered, ...Object.keys(NAMES_NO_RESOURCE)].filter((key) => !keys.includes(key)), [], "rows for routes the kit does not have");
    assert.ok(t.routes.filter(takesInput).every((route) => covered.has(routeKey(route)) || routeKey(route) in NAMES_NO_RESOURCE));
  });

  for (const [index, row] of ROWS.entries()) {
    it(`${row.route}: ${row.what}`, async () => {
      const onA = await send(w, await row.onA(w, index));
      if (row.onNothing) {
        const onNothing = await send(w, await row.onNothing(w, index));
        const echoes = row.echoes?.(w, index) ?? [];
        assert.deepEqual(comparable(onA, echoes, row.generated ?? []), comparable(onNothing, echoes, row.generated ?? []), "A's resource answers unlike a missing one");
      }
      if (row.expect === "not_found") assert.equal(onA.status, 404, onA.body);
      else if (row.expect === "success") assert.ok(onA.status >= 200 && onA.status < 300, onA.body);
      else if (row.expect === "refused") assert.equal(onA.status, 401, onA.body);
      else await row.expect(onA, w);
      // Nothing of A's ever shows: its company name, its ids.
      for (const secret of [w.a.companyName, w.a.companyId, w.ids.privacyRequest, w.ids.upload]) assert.ok(!onA.body.includes(secret), `${secret} in ${onA.body}`);
    });
  }

  it("leaves every record of A as it was once B's requests and their jobs have run", async () => {
    await t.scheduler.flush();
    assert.deepEqual(await aSnapshot(), before_);
  });

  it("install pages act for the signed-in user's company only: B's user installing A's application gets a token for B", async () => {
    const client = new InstallClient(t.kit);
    const url = installPathOf(t, w.ids.aClientId);
    await client.signIn(url, B_USER_EMAIL, PASSWORD);
    const consent = await client.get(url);
    assert.equal(consent.status, 200);
    assert.ok(consent.body.includes(w.b.companyName) && !consent.body.includes(w.a.companyName));
    const code = await authorize(t, w.ids.aClientId, B_USER_EMAIL, client);
    const exchange = await send(w, tokenForm({ clientId: w.ids.aClientId, clientSecret: (w.ids as Json).aClientSecret }, code));
    assert.equal(exchange.status, 200, exchange.body);
    const me = await t.as(exchange.json<Json>().access_token, { url: "/v1/me" });
    assert.equal(me.json<Json>().companyId, w.b.companyId);
  });

  it("A's code still works for A after B's client tried it", async () => {
    const exchange = await send(w, tokenForm({ clientId: w.ids.aClientId, clientSecret: (w.ids as Json).aClientSecret }, w.ids.aCode));
    assert.equal(exchange.status, 200, exchange.body);
    assert.equal((await t.as(exchange.json<Json>().access_token, { url: "/v1/me" })).json<Json>().companyId, w.a.companyId);
  });

  it("gives no count away: legacy privacy ids are numbered per company, affiliate ids are not a count of companies", async () => {
    const c = await t.provision("Initech");
    const legacyRequest = (company: ProvisionedCompany) =>
      send(w, json("POST", "/privacy/delete-request", { subjectEmail: "someone@example.com" }, company.legacyToken)).then((response) => response.json<Json>());
    // A made five legacy requests before; C's first is still number 1.
    assert.equal((await legacyRequest(c)).id, 1);
    assert.equal((await legacyRequest(c)).id, 2);
    assert.ok(w.ids.privacyNumber >= 4);
    const affiliates = [(await legacyRequest(w.a)).affiliateUserId, (await legacyRequest(c)).affiliateUserId];
    for (const name of ["Hooli", "Umbrella"]) affiliates.push((await legacyRequest(await t.provision(name))).affiliateUserId);
    assert.equal(new Set(affiliates).size, affiliates.length);
    const sorted = [...affiliates].sort((x, y) => x - y);
    assert.ok(sorted.some((value, index) => index > 0 && value - sorted[index - 1]! > 1), `affiliate ids look like a count: ${affiliates}`);
  });

  it("keeps A's and B's catalog products apart when both use the same product id", async () => {
    const upload = await send(w, json("POST", "/v1/product-catalog/uploads", {}));
    const url = new URL(upload.json<Json>().uploadUrl);
    const product = { id: "p-1", name: "B's product", link: "https://b.example/p-1", lastUpdated: "2026-02-01T10:00:00Z", variants: [{ id: "p-1-v1", name: "B's variant", link: "https://b.example/v", prices: [{ currencyCode: "USD", amount: "9.00" }], availableForPurchase: true, lastUpdated: "2026-02-01T10:00:00Z" }] };
    assert.equal((await send(w, { method: "PUT", url: `${url.pathname}${url.search}`, body: `${JSON.stringify(product)}\n`, token: null })).status, 200);
    await t.scheduler.flush();
    const catalog = t.kit.plugin("catalog");
    assert.equal((await catalog.getProduct(w.b.companyId, "p-1"))?.name, "B's product");
    assert.equal((await catalog.getProduct(w.a.companyId, "p-1"))?.name, "A's product");
    assert.equal((await catalog.getVariant(w.a.companyId, "p-1-v1"))?.variant.name, "A's variant");
  });
});

/** What A's profile of a phone holds: identifiers, attributes and the types of its events. */
async function profileOf(t: SecurityKit, companyId: string, phone: string): Promise<Json> {
  const profiles = t.kit.plugin("profiles");
  const profile = await profiles.show(companyId, { kind: "phone", value: phone });
  if (!profile) return undefined;
  const { events } = await profiles.events(companyId, profile.id, { first: 100 });
  return { ...profile, events: events.map((event) => [event.kind, event.type]) };
}

function installPathOf(t: SecurityKit, clientId: string): string {
  const url = new URL(t.kit.plugin("oauth").installUrl({ clientId, redirectUri: REDIRECT_URI, state: "s" }));
  return `${url.pathname}${url.search}`;
}

/** Signs in (unless the client is signed in) and authorizes; returns the code of the redirect. */
async function authorize(t: SecurityKit, clientId: string, email: string, client = new InstallClient(t.kit)): Promise<string> {
  const url = installPathOf(t, clientId);
  if (!client.jar.get("rk_session")) await client.signIn(url, email, PASSWORD);
  const { location } = await client.decide(url, "authorize");
  const code = location.searchParams.get("code");
  if (!code) throw new Error(`no code in ${location}`);
  return code;
}
