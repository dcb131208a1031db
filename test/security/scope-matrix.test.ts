import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { SCOPES, type AnyRoute, type Scope } from "../../src/index.ts";
import type { Json } from "../support/test-kit.ts";
import { routeKey, startSecurityKit, type SecurityKit } from "./support.ts";

/**
 * Interface §7 and DESIGN §8: every v1 route demands its scope (403 without
 * it), a token holding only that scope is enough, legacy tokens work only on
 * legacy routes and v1 tokens only on v1 routes. The routes come from the kit,
 * so a new route is in the matrix the day it is added, and fails it until it
 * has a valid request below.
 */

interface ValidRequest {
  method: string;
  url: string;
  body?: Json;
}

/**
 * A request the route accepts from a credential of the company, made fresh for each call (some spend
 * state). `token` is the credential it is made for: a webhook belongs to its token's application.
 */
type RequestMaker = (s: Setup, token: string) => Promise<ValidRequest>;

interface Setup {
  t: SecurityKit;
  companyId: string;
  apiKey: string;
  legacyToken: string;
  /** A new valid US number on each call. */
  phone(): string;
  ids: { privacyRequest: string; upload: string; type: string; message: string; reminder: string; journey: string; segment: string; campaign: string };
}

const tactical = (s: Setup, method: string, url: string, body?: Json) => s.t.as(s.legacyToken, { method, url, body });

async function ok(response: Promise<{ status: number; body: string; json<T>(): T }>): Promise<Json> {
  const answered = await response;
  assert.ok(answered.status < 300, `setup answered ${answered.status}: ${answered.body}`);
  return answered.json<Json>();
}

async function activeSubscriber(s: Setup): Promise<string> {
  const phone = s.phone();
  await ok(tactical(s, "POST", "/1/add-subscribers", { phone }));
  return phone;
}

const SEGMENT = { name: "Gold", rule: { attribute: { name: "tier", op: "eq", value: "gold" } } };
const campaignBody = (s: Setup) => ({ name: "Sale", segmentId: s.ids.segment, channel: "sms", text: "20% off today" });

/** A new draft campaign (sending, cancelling and deleting spend one). */
async function campaign(s: Setup): Promise<string> {
  return (await ok(s.t.as(s.apiKey, { method: "POST", url: "/v1/campaigns", body: campaignBody(s) }))).id;
}

async function reminder(s: Setup): Promise<string> {
  const body = { eventType: { uuid: s.ids.type }, phone: s.phone(), eventDateTime: "2026-03-08T15:00:00", subscriberTimeZone: "America/New_York" };
  return (await ok(tactical(s, "POST", "/events/reminders", body))).uuid;
}

let messageNumber = 0;
let webhookNumber = 0;
const webhookUrl = () => `https://hooks.example/${++webhookNumber}`;

/** A webhook of the token's application, or an id nobody has when the token may not make one (the answer is 401 or 403 before any lookup). */
async function webhookOf(s: Setup, token: string): Promise<string> {
  const created = await s.t.as(token, { method: "POST", url: "/v1/webhooks", body: { url: webhookUrl(), events: ["sms.subscribed"] } });
  return created.status === 201 ? created.json<Json>().id : "no-such-webhook";
}

const VALID_REQUESTS: Record<string, RequestMaker> = {
  "GET /v1/me": async () => ({ method: "GET", url: "/v1/me" }),
  "POST /v1/subscriptions": async (s) => ({
    method: "POST",
    url: "/v1/subscriptions",
    body: { user: { phone: s.phone() }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING" },
  }),
  "GET /v1/subscriptions": async (s) => ({ method: "GET", url: `/v1/subscriptions?phone=${encodeURIComponent(s.phone())}` }),
  "POST /v1/subscriptions/unsubscribe": async (s) => ({ method: "POST", url: "/v1/subscriptions/unsubscribe", body: { user: { phone: s.phone() } } }),
  "DELETE /v1/subscriptions": async (s) => ({ method: "DELETE", url: `/v1/subscriptions?phone=${encodeURIComponent(s.phone())}` }),
  "POST /v1/graphql": async (s) => ({
    method: "POST",
    url: "/v1/graphql",
    body: { query: `{ viewer { installedApplication { installerCompany { id name } } } }`, variables: { unused: s.companyId } },
  }),
  "GET /v1/webhooks": async () => ({ method: "GET", url: "/v1/webhooks" }),
  "POST /v1/webhooks": async () => ({ method: "POST", url: "/v1/webhooks", body: { url: webhookUrl(), events: ["sms.subscribed", "sms.unsubscribed"] } }),
  "PUT /v1/webhooks/:webhookId": async (s, token) => ({ method: "PUT", url: `/v1/webhooks/${await webhookOf(s, token)}`, body: { events: ["email.subscribed"] } }),
  "DELETE /v1/webhooks/:webhookId": async (s, token) => ({ method: "DELETE", url: `/v1/webhooks/${await webhookOf(s, token)}` }),
  "POST /v1/privacy/delete-request": async (s) => ({ method: "POST", url: "/v1/privacy/delete-request", body: { subjectPhone: s.phone() } }),
  "GET /v1/privacy/delete-request/:id": async (s) => ({ method: "GET", url: `/v1/privacy/delete-request/${s.ids.privacyRequest}` }),
  "POST /v1/product-catalog/uploads": async () => ({ method: "POST", url: "/v1/product-catalog/uploads", body: {} }),
  "GET /v1/product-catalog/uploads": async () => ({ method: "GET", url: "/v1/product-catalog/uploads" }),
  "GET /v1/product-catalog/uploads/:uploadId": async (s) => ({ method: "GET", url: `/v1/product-catalog/uploads/${s.ids.upload}` }),
  "POST /v1/events/custom": async (s) => ({ method: "POST", url: "/v1/events/custom", body: { type: "Viewed", user: { phone: s.phone() } } }),
  ...Object.fromEntries(
    ["product-view", "add-to-cart", "purchase"].map((path): [string, RequestMaker] => [
      `POST /v1/events/ecommerce/${path}`,
      async (s) => ({ method: "POST", url: `/v1/events/ecommerce/${path}`, body: { items: [{ productId: "p-1", productVariantId: "v-1", price: [{ value: 5 }] }], user: { phone: s.phone() } } }),
    ]),
  ),
  "POST /v1/attributes/custom": async (s) => ({ method: "POST", url: "/v1/attributes/custom", body: { properties: { tier: "gold" }, user: { phone: s.phone() } } }),
  "GET /v1/attributes/custom": async (s) => ({ method: "GET", url: `/v1/attributes/custom?phone=${encodeURIComponent(s.phone())}` }),
  "POST /v1/identity-resolution/user-identifiers": async (s) => ({ method: "POST", url: "/v1/identity-resolution/user-identifiers", body: { phone: s.phone(), clientUserId: `u-${s.phone()}` } }),
  "POST /1/add-subscribers": async (s) => ({ method: "POST", url: "/1/add-subscribers", body: { phone: s.phone() } }),
  "POST /1/subscribers/unsubscribe": async (s) => ({ method: "POST", url: "/1/subscribers/unsubscribe", body: { phone: await activeSubscriber(s), sendOptOutMessage: false } }),
  "POST /1/messages": async (s) => ({ method: "POST", url: "/1/messages", body: { to: await activeSubscriber(s), body: `Order ${++messageNumber} shipped`, type: "TRANSACTIONAL" } }),
  "POST /v1/messages": async (s) => ({ method: "POST", url: "/v1/messages", body: { to: await activeSubscriber(s), body: `Order ${++messageNumber} shipped` } }),
  "POST /privacy/delete-request": async (s) => ({ method: "POST", url: "/privacy/delete-request", body: { subjectPhone: s.phone() } }),
  "POST /events/types": async () => ({ method: "POST", url: "/events/types", body: { type: "Haircut" } }),
  "GET /events/types/:uuid": async (s) => ({ method: "GET", url: `/events/types/${s.ids.type}` }),
  "POST /events/types/messages": async (s) => {
    const { uuid } = await ok(tactical(s, "POST", "/events/types", { type: "Massage" }));
    return { method: "POST", url: "/events/types/messages", body: { eventType: { uuid }, messageType: "CONFIRMATION", text: "Booked." } };
  },
  "GET /events/types/messages/:uuid": async (s) => ({ method: "GET", url: `/events/types/messages/${s.ids.message}` }),
  "PUT /events/types/messages/:uuid": async (s) => ({ method: "PUT", url: `/events/types/messages/${s.ids.message}`, body: { text: "See you soon." } }),
  "POST /events/reminders": async (s) => ({
    method: "POST",
    url: "/events/reminders",
    body: { eventType: { uuid: s.ids.type }, phone: s.phone(), eventDateTime: "2026-03-08T15:00:00", subscriberTimeZone: "America/New_York" },
  }),
  "POST /v1/journeys": async () => ({ method: "POST", url: "/v1/journeys", body: { template: "welcome" } }),
  "GET /v1/journeys": async () => ({ method: "GET", url: "/v1/journeys" }),
  "GET /v1/journeys/:id": async (s) => ({ method: "GET", url: `/v1/journeys/${s.ids.journey}` }),
  "PUT /v1/journeys/:id": async (s) => ({ method: "PUT", url: `/v1/journeys/${s.ids.journey}`, body: { window: "P2D" } }),
  "POST /v1/journeys/:id/pause": async (s) => ({ method: "POST", url: `/v1/journeys/${s.ids.journey}/pause` }),
  "POST /v1/journeys/:id/resume": async (s) => ({ method: "POST", url: `/v1/journeys/${s.ids.journey}/resume` }),
  "DELETE /v1/journeys/:id": async (s) => ({ method: "DELETE", url: `/v1/journeys/${(await ok(s.t.as(s.apiKey, { method: "POST", url: "/v1/journeys", body: { template: "welcome" } }))).id}` }),
  "GET /v1/journeys/:id/stats": async (s) => ({ method: "GET", url: `/v1/journeys/${s.ids.journey}/stats` }),
  "POST /v1/segments": async () => ({ method: "POST", url: "/v1/segments", body: SEGMENT }),
  "GET /v1/segments": async () => ({ method: "GET", url: "/v1/segments" }),
  "GET /v1/segments/:id": async (s) => ({ method: "GET", url: `/v1/segments/${s.ids.segment}` }),
  "PUT /v1/segments/:id": async (s) => ({ method: "PUT", url: `/v1/segments/${s.ids.segment}`, body: { name: "Gold" } }),
  "DELETE /v1/segments/:id": async (s) => ({ method: "DELETE", url: `/v1/segments/${(await ok(s.t.as(s.apiKey, { method: "POST", url: "/v1/segments", body: SEGMENT }))).id}` }),
  "GET /v1/segments/:id/preview": async (s) => ({ method: "GET", url: `/v1/segments/${s.ids.segment}/preview` }),
  "POST /v1/campaigns": async (s) => ({ method: "POST", url: "/v1/campaigns", body: campaignBody(s) }),
  "GET /v1/campaigns": async () => ({ method: "GET", url: "/v1/campaigns" }),
  "GET /v1/campaigns/:id": async (s) => ({ method: "GET", url: `/v1/campaigns/${s.ids.campaign}` }),
  "PUT /v1/campaigns/:id": async (s) => ({ method: "PUT", url: `/v1/campaigns/${s.ids.campaign}`, body: { name: "Sale, day 2" } }),
  "DELETE /v1/campaigns/:id": async (s) => ({ method: "DELETE", url: `/v1/campaigns/${await campaign(s)}` }),
  "POST /v1/campaigns/:id/send": async (s) => ({ method: "POST", url: `/v1/campaigns/${await campaign(s)}/send`, body: {} }),
  "POST /v1/campaigns/:id/cancel": async (s) => ({ method: "POST", url: `/v1/campaigns/${await campaign(s)}/cancel` }),
  "GET /v1/campaigns/:id/estimate": async (s) => ({ method: "GET", url: `/v1/campaigns/${s.ids.campaign}/estimate` }),
  "GET /v1/campaigns/:id/results": async (s) => ({ method: "GET", url: `/v1/campaigns/${s.ids.campaign}/results` }),
  "POST /v1/short-links": async () => ({ method: "POST", url: "/v1/short-links", body: { url: "https://shop.example.com/sale" } }),
  "GET /events/reminders/:uuid": async (s) => ({ method: "GET", url: `/events/reminders/${s.ids.reminder}` }),
  "PUT /events/reminders/:uuid": async (s) => ({ method: "PUT", url: `/events/reminders/${s.ids.reminder}`, body: { firstName: "Ada" } }),
  "POST /events/reminders/:uuid/cancel": async (s) => ({ method: "POST", url: `/events/reminders/${await reminder(s)}/cancel` }),
  "POST /events/reminders/:uuid/no-show": async (s) => ({ method: "POST", url: `/events/reminders/${await reminder(s)}/no-show` }),
};

const isV1 = (route: AnyRoute): route is AnyRoute & { auth: { kind: "api"; anyOfScopes?: readonly Scope[] } } => route.auth.kind === "api";
const isLegacy = (route: AnyRoute) => route.auth.kind === "legacy";
const scopesOf = (route: AnyRoute): readonly Scope[] => (route.auth.kind === "api" ? (route.auth.anyOfScopes ?? []) : []);

describe("scope matrix: every v1 and legacy route of the server", () => {
  let t: SecurityKit;
  let s: Setup;

  before(async () => {
    t = await startSecurityKit();
    let next = 0;
    const { companyId, apiKey, legacyToken } = t.company;
    s = { t, companyId, apiKey, legacyToken, phone: () => `+1914844${String(++next).padStart(4, "0")}`, ids: {} as Setup["ids"] };
    const privacyRequest = (await ok(t.as(apiKey, { method: "POST", url: "/v1/privacy/delete-request", body: { subjectPhone: s.phone() } }))).id;
    const upload = (await ok(t.as(apiKey, { method: "POST", url: "/v1/product-catalog/uploads", body: {} }))).uploadId;
    const type = (await ok(tactical(s, "POST", "/events/types", { type: "Haircut" }))).uuid;
    const message = (await ok(tactical(s, "POST", "/events/types/messages", { eventType: { uuid: type }, messageType: "REMINDER", text: "Soon." }))).uuid;
    const journey = (await ok(t.as(apiKey, { method: "POST", url: "/v1/journeys", body: { template: "cart_abandonment" } }))).id;
    const segment = (await ok(t.as(apiKey, { method: "POST", url: "/v1/segments", body: SEGMENT }))).id;
    s.ids = { privacyRequest, upload, type, message, reminder: "", journey, segment, campaign: "" };
    s.ids.campaign = await campaign(s);
    s.ids.reminder = await reminder(s);
  });

  after(() => t.stop());

  it("has a valid request for every v1 and legacy route, and lists no route the kit does not have", () => {
    const authenticated = t.routes.filter((route) => isV1(route) || isLegacy(route)).map(routeKey);
    assert.deepEqual(authenticated.filter((key) => !(key in VALID_REQUESTS)), [], "routes without a valid request in VALID_REQUESTS");
    assert.deepEqual(Object.keys(VALID_REQUESTS).filter((key) => !authenticated.includes(key)), [], "VALID_REQUESTS names routes the kit does not have");
    // The matrix below would prove nothing if the kit declared no scopes.
    assert.ok(t.routes.filter((route) => scopesOf(route).length > 0).length >= 8);
  });

  it("answers 403 on every scoped v1 route to a token holding every scope but the route's", async () => {
    for (const route of t.routes.filter(isV1)) {
      const needed = scopesOf(route);
      if (needed.length === 0) continue;
      for (const kind of ["api_key", "oauth"] as const) {
        const token = await t.tokenWith(s.companyId, SCOPES.filter((scope) => !needed.includes(scope)), kind);
        const response = await t.as(token, await VALID_REQUESTS[routeKey(route)]!(s, token));
        assert.equal(response.status, 403, `${routeKey(route)} with a ${kind} lacking ${needed.join("|")}: ${response.status} ${response.body}`);
        assert.equal(response.json<Json>().error.code, "forbidden");
        assert.match(response.json<Json>().error.message, new RegExp(needed[0]!));
      }
    }
  });

  it("serves every v1 route to a token holding only one of the route's scopes (no scope at all where the route names none)", async () => {
    let tried = 0;
    for (const route of t.routes.filter(isV1)) {
      const needed = scopesOf(route);
      for (const scopes of needed.length === 0 ? [[]] : needed.map((scope) => [scope])) {
        for (const kind of ["api_key", "oauth"] as const) {
          const token = await t.tokenWith(s.companyId, scopes, kind);
          const response = await t.as(token, await VALID_REQUESTS[routeKey(route)]!(s, token));
          assert.ok(response.status >= 200 && response.status < 300, `${routeKey(route)} with a ${kind} holding only [${scopes}]: ${response.status} ${response.body}`);
          tried++;
        }
      }
    }
    assert.ok(tried >= 24, `only ${tried} combinations tried`);
  });

  it("refuses a legacy token on every v1 route with 401", async () => {
    for (const route of t.routes.filter(isV1)) {
      const response = await t.as(s.legacyToken, await VALID_REQUESTS[routeKey(route)]!(s, s.legacyToken));
      assert.equal(response.status, 401, `${routeKey(route)} with a legacy token: ${response.status} ${response.body}`);
      assert.equal(response.json<Json>().error.message, "legacy tokens work only on legacy routes");
    }
  });

  it("refuses a v1 token on every legacy route: 401, or 403 where the interface answers a bad token so (§4.9, §4.10)", async () => {
    const oauthToken = await t.tokenWith(s.companyId, SCOPES, "oauth");
    for (const route of t.routes.filter(isLegacy)) {
      const expected = route.auth.kind === "legacy" ? (route.auth.invalidTokenStatus ?? 401) : 401;
      for (const token of [s.apiKey, oauthToken]) {
        const response = await t.as(token, await VALID_REQUESTS[routeKey(route)]!(s, token));
        assert.equal(response.status, expected, `${routeKey(route)} with a v1 token: ${response.status} ${response.body}`);
        assert.equal(response.json<Json>().error.message, "this route needs a legacy token, not a v1 token");
      }
    }
  });

  it("serves every legacy route to the company's legacy token", async () => {
    for (const route of t.routes.filter(isLegacy)) {
      const response = await t.as(s.legacyToken, await VALID_REQUESTS[routeKey(route)]!(s, s.legacyToken));
      assert.ok(response.status >= 200 && response.status < 300, `${routeKey(route)} with the legacy token: ${response.status} ${response.body}`);
    }
  });

  it("checks the GraphQL user field's scope inside the graph: FORBIDDEN without subscriptions:read or :write, data with either alone", async () => {
    const query = { query: `{ viewer { installedApplication { installerCompany { user(phone: "+19148440001") { subscriptions { subscriptionEligibilities { eligibility { isEligible } } } } } } } }` };
    const without = await t.as(await t.tokenWith(s.companyId, ["privacy_requests:read"]), { method: "POST", url: "/v1/graphql", body: query });
    assert.equal(without.status, 200);
    assert.equal(without.json<Json>().errors[0].extensions.code, "FORBIDDEN");
    for (const scope of ["subscriptions:read", "subscriptions:write"] as const) {
      const response = await t.as(await t.tokenWith(s.companyId, [scope]), { method: "POST", url: "/v1/graphql", body: query });
      assert.equal(response.status, 200);
      assert.equal(response.json<Json>().errors, undefined, `${scope}: ${response.body}`);
      assert.ok(response.json<Json>().data.viewer.installedApplication.installerCompany.user);
    }
  });
});
