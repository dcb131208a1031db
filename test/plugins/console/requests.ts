import assert from "node:assert/strict";
import { SmsSendError, type Reachkit } from "../../../src/index.ts";
import type { TestKit } from "../../support/test-kit.ts";
import { OWNER, signedIn, startConsoleKit, VIEWER, type ConsoleBrowser } from "./support.ts";
import { seedConsoleWorld, type ConsoleWorld } from "./world.ts";

/** A request of the console as a browser sends it: a page, or a form (the CSRF token is added by whoever sends it). */
export interface ConsoleRequest {
  method: "GET" | "POST";
  url: string;
  fields?: Record<string, string>;
}

/** A company's console world, and what actions need made fresh for each call (ids of records they use up). */
export interface ConsoleFixture {
  kit: Reachkit;
  world: ConsoleWorld;
  /** A new scheduled reminder of the company (cancel and no-show end theirs). */
  reminder(): Promise<string>;
  /** A new API key credential of the company (revoking spends it). */
  credential(): Promise<string>;
  /** An OAuth application the company owns. */
  oauthApplication(): Promise<string>;
  /** A new journey of the company (deleting uses one up). */
  journey(): Promise<string>;
  /** A new viewer of the company (role changes and deletes use one up). */
  user(): Promise<string>;
  /** The company's webhook (to a port nobody listens on) and the delivery a profile change made for it; `fresh`: a new one (deleting uses one up). */
  webhook(fresh?: boolean): Promise<{ webhookId: string; deliveryId: string }>;
  /** The company's own application (the one its API key belongs to). */
  application(): Promise<string>;
  /** The company's segment of its gold-tier people. */
  segment(): Promise<string>;
  /** A new draft campaign to that segment (sending or cancelling uses one up). */
  campaign(): Promise<string>;
}

let made = 0;

/** A company's API through its key: the answer's JSON (an empty id when there is none); an error answer fails the test. */
export const companyApi = (kit: Reachkit, apiKey: string) => async (method: string, url: string, body?: unknown) => {
  const answer = await kit.inject({ method, url, body, headers: { authorization: `Bearer ${apiKey}` } });
  assert.ok(answer.status < 300, `${method} ${url}: ${answer.status} ${answer.body}`);
  return answer.body ? answer.json<{ id: string }>() : { id: "" };
};

export async function consoleFixture(
  t: TestKit,
  company: { companyId: string; apiKey: string; legacyToken: string } = t.company,
  addresses: { phonePrefix?: string; emailDomain?: string } = {},
): Promise<ConsoleFixture> {
  const world = await seedConsoleWorld(t.kit, t.sms, company, t.scheduler, addresses.phonePrefix, addresses.emailDomain);
  const { kit } = t;
  const send = (method: string, url: string, body: unknown) => kit.inject({ method, url, body, headers: { authorization: `Bearer ${company.legacyToken}` } });
  const type = (await send("POST", "/events/types", { type: "Consultation" })).json<{ uuid: string }>().uuid;
  const api = companyApi(kit, company.apiKey);
  let application: string | undefined;
  let webhook: Promise<{ webhookId: string; deliveryId: string }> | undefined;
  let segment: Promise<string> | undefined;
  const newWebhook = async () => {
    const { id } = await api("POST", "/v1/webhooks", { url: `http://127.0.0.1:9/hooks/${++made}`, events: ["custom_attribute.set"] });
    await api("POST", "/v1/attributes/custom", { properties: { tier: "gold" }, user: { phone: world.phones[0] } });
    // The first attempt fails at once (nobody listens on port 9) and is logged.
    await t.scheduler.flush();
    const [delivery] = await kit.plugin("webhooks").deliveries.log(id, { limit: 1 });
    return { webhookId: id, deliveryId: delivery!.id };
  };
  const ownSegment = () => (segment ??= api("POST", "/v1/segments", { name: "Gold members", rule: { attribute: { name: "tier", op: "eq", value: "gold" } } }).then((created) => created.id));
  return {
    kit,
    world,
    async reminder() {
      const answer = await send("POST", "/events/reminders", { eventType: { uuid: type }, phone: world.phones[1], eventDateTime: "2026-03-09T10:00:00", subscriberTimeZone: "America/New_York", externalEventId: `e-${++made}` });
      return answer.json<{ uuid: string }>().uuid;
    },
    async credential() {
      const accounts = kit.plugin("accounts");
      const app = await accounts.createApplication({ companyId: company.companyId, name: `App ${++made}`, scopes: ["subscriptions:read"] });
      return (await accounts.issueCredential({ companyId: company.companyId, kind: "api_key", applicationId: app.id })).credential.id;
    },
    async oauthApplication() {
      application ??= (
        await kit.plugin("oauth").applications.create({ companyId: company.companyId, name: "Own app", redirectUris: ["https://own.example/callback"], scopes: ["subscriptions:read"] })
      ).application.applicationId;
      return application;
    },
    async journey() {
      const answer = await kit.inject({ method: "POST", url: "/v1/journeys", body: { template: "browse_abandonment", name: `Browse ${++made}` }, headers: { authorization: `Bearer ${company.apiKey}` } });
      return answer.json<{ id: string }>().id;
    },
    async user() {
      return (await kit.plugin("oauth").users.create({ companyId: company.companyId, email: `user${++made}@${company.companyId.slice(0, 8)}.example`, password: "a long enough password", role: "viewer" })).id;
    },
    webhook(fresh = false) {
      if (fresh) return newWebhook();
      return (webhook ??= newWebhook());
    },
    async application() {
      return (await kit.plugin("accounts").listApplications(company.companyId))[0]!.id;
    },
    segment: ownSegment,
    async campaign() {
      return (await api("POST", "/v1/campaigns", { name: `Sale ${++made}`, segmentId: await ownSegment(), channel: "sms", text: "Sale at {companyName} today" })).id;
    },
  };
}

export interface SignedInConsole {
  t: TestKit;
  f: ConsoleFixture;
  owner: ConsoleBrowser;
  viewer: ConsoleBrowser;
}

/** A console kit with Acme's world, its owner and its viewer signed in. */
export async function signedInConsole(): Promise<SignedInConsole> {
  const t = await startConsoleKit();
  const f = await consoleFixture(t);
  return { t, f, owner: await signedIn(t.kit, OWNER), viewer: await signedIn(t.kit, VIEWER) };
}

/** A failing provider answer, for tests that need one more failed text. */
export const invalidNumber = () => new SmsSendError("invalid_number", "21211: The 'To' number is not a valid phone number");

/**
 * A valid request for every route of the console, made from a company's
 * fixture. Tests check this table against the kit's routes, so a new console
 * route fails them until it has a row.
 */
export const CONSOLE_REQUESTS: Readonly<Record<string, (f: ConsoleFixture) => Promise<ConsoleRequest> | ConsoleRequest>> = {
  "GET /console/assets/:file": () => ({ method: "GET", url: "/console/assets/console.css" }),
  "GET /console/sign-in": () => ({ method: "GET", url: "/console/sign-in" }),
  "POST /console/sign-in": () => ({ method: "POST", url: "/console/sign-in", fields: { email: "nobody@example.com", password: "wrong password" } }),
  "POST /console/sign-out": () => ({ method: "POST", url: "/console/sign-out", fields: {} }),
  "GET /console": () => ({ method: "GET", url: "/console?days=7" }),
  "GET /console/subscribers": () => ({ method: "GET", url: "/console/subscribers?q=%2B1" }),
  "GET /console/subscriber": (f) => ({ method: "GET", url: `/console/subscriber?phone=${encodeURIComponent(f.world.phones[0]!)}` }),
  "GET /console/messages": () => ({ method: "GET", url: "/console/messages?status=failed" }),
  "GET /console/journeys": () => ({ method: "GET", url: "/console/journeys" }),
  "GET /console/journeys/:journeyId": (f) => ({ method: "GET", url: `/console/journeys/${f.world.journeyId}` }),
  "POST /console/journeys/:journeyId/pause": async (f) => ({ method: "POST", url: `/console/journeys/${await f.journey()}/pause`, fields: {} }),
  "POST /console/journeys/:journeyId/resume": async (f) => ({ method: "POST", url: `/console/journeys/${await f.journey()}/resume`, fields: {} }),
  "POST /console/journeys/:journeyId/delete": async (f) => ({ method: "POST", url: `/console/journeys/${await f.journey()}/delete`, fields: {} }),
  "GET /console/campaigns": () => ({ method: "GET", url: "/console/campaigns" }),
  "POST /console/campaigns": async (f) => ({ method: "POST", url: "/console/campaigns", fields: { name: "Weekend", segmentId: await f.segment(), channel: "sms", text: "Weekend at {companyName}" } }),
  "GET /console/campaigns/:campaignId": async (f) => ({ method: "GET", url: `/console/campaigns/${await f.campaign()}` }),
  "POST /console/campaigns/:campaignId/send": async (f) => ({ method: "POST", url: `/console/campaigns/${await f.campaign()}/send`, fields: { sendAt: "2026-12-01T15:00:00Z" } }),
  "POST /console/campaigns/:campaignId/cancel": async (f) => ({ method: "POST", url: `/console/campaigns/${await f.campaign()}/cancel`, fields: {} }),
  "GET /console/segments": () => ({ method: "GET", url: "/console/segments" }),
  "GET /console/segments/:segmentId": async (f) => ({ method: "GET", url: `/console/segments/${await f.segment()}` }),
  "GET /console/catalog": () => ({ method: "GET", url: "/console/catalog" }),
  "POST /console/catalog/uploads": () => ({ method: "POST", url: "/console/catalog/uploads", fields: { validateOnly: "true" } }),
  "GET /console/catalog/uploads/:uploadId": (f) => ({ method: "GET", url: `/console/catalog/uploads/${f.world.uploadId}` }),
  "GET /console/catalog/uploads/:uploadId/progress": (f) => ({ method: "GET", url: `/console/catalog/uploads/${f.world.uploadId}/progress` }),
  "GET /console/products": (f) => ({ method: "GET", url: `/console/products?q=${f.world.productId.slice(0, 4)}` }),
  "GET /console/products/:productId": (f) => ({ method: "GET", url: `/console/products/${f.world.productId}` }),
  "GET /console/reminders": () => ({ method: "GET", url: "/console/reminders" }),
  "GET /console/reminders/:uuid": (f) => ({ method: "GET", url: `/console/reminders/${f.world.reminderUuid}` }),
  "POST /console/reminders/:uuid/cancel": async (f) => ({ method: "POST", url: `/console/reminders/${await f.reminder()}/cancel`, fields: {} }),
  "POST /console/reminders/:uuid/no-show": async (f) => ({ method: "POST", url: `/console/reminders/${await f.reminder()}/no-show`, fields: {} }),
  "GET /console/privacy": () => ({ method: "GET", url: "/console/privacy" }),
  "POST /console/privacy": () => ({ method: "POST", url: "/console/privacy", fields: { subjectEmail: `leaving${++made}@example.com` } }),
  "GET /console/webhooks": () => ({ method: "GET", url: "/console/webhooks" }),
  "POST /console/webhooks": async (f) => ({ method: "POST", url: "/console/webhooks", fields: { applicationId: await f.application(), url: `http://127.0.0.1:9/made/${++made}`, "event:sms.subscribed": "yes" } }),
  "GET /console/webhooks/:webhookId": async (f) => ({ method: "GET", url: `/console/webhooks/${(await f.webhook()).webhookId}?status=pending` }),
  "POST /console/webhooks/:webhookId/disable": async (f) => ({ method: "POST", url: `/console/webhooks/${(await f.webhook(true)).webhookId}/disable`, fields: {} }),
  "POST /console/webhooks/:webhookId/enable": async (f) => ({ method: "POST", url: `/console/webhooks/${(await f.webhook()).webhookId}/enable`, fields: {} }),
  "POST /console/webhooks/:webhookId/delete": async (f) => ({ method: "POST", url: `/console/webhooks/${(await f.webhook(true)).webhookId}/delete`, fields: {} }),
  "POST /console/webhooks/:webhookId/deliveries/:deliveryId/redeliver": async (f) => {
    const { webhookId, deliveryId } = await f.webhook();
    return { method: "POST", url: `/console/webhooks/${webhookId}/deliveries/${deliveryId}/redeliver`, fields: {} };
  },
  "POST /console/webhooks/signing-keys/:applicationId/rotate": async (f) => ({ method: "POST", url: `/console/webhooks/signing-keys/${await f.application()}/rotate`, fields: { overlapHours: "1" } }),
  "GET /console/settings": () => ({ method: "GET", url: "/console/settings" }),
  "POST /console/settings/sign-up-units": () => ({ method: "POST", url: "/console/settings/sign-up-units", fields: { type: "MARKETING", language: "fr", country: "CA" } }),
  "POST /console/settings/sender-number": () => ({ method: "POST", url: "/console/settings/sender-number", fields: { number: `+1555${String(2_000_000 + ++made).padStart(7, "0")}` } }),
  "POST /console/settings/message-prefix": () => ({ method: "POST", url: "/console/settings/message-prefix", fields: { template: "{company} news: " } }),
  "POST /console/settings/send-rules": () => ({ method: "POST", url: "/console/settings/send-rules", fields: { timeZone: "America/Chicago", quiet: "on", quietStart: "21:00", quietEnd: "09:00", dailyCap: "2" } }),
  "POST /console/settings/api-keys": () => ({ method: "POST", url: "/console/settings/api-keys", fields: { name: "Sync", "scope:subscriptions:read": "yes" } }),
  "POST /console/settings/api-keys/:credentialId/revoke": async (f) => ({ method: "POST", url: `/console/settings/api-keys/${await f.credential()}/revoke`, fields: {} }),
  "POST /console/settings/oauth-apps": () => ({ method: "POST", url: "/console/settings/oauth-apps", fields: { name: "Loyalty", redirectUris: "https://loyalty.example/callback" } }),
  "POST /console/settings/oauth-apps/:applicationId/rotate-secret": async (f) => ({ method: "POST", url: `/console/settings/oauth-apps/${await f.oauthApplication()}/rotate-secret`, fields: {} }),
  "POST /console/settings/users": () => ({ method: "POST", url: "/console/settings/users", fields: { email: `new${++made}@acme.example`, password: "a long enough password", role: "viewer" } }),
  "POST /console/settings/users/:userId/role": async (f) => ({ method: "POST", url: `/console/settings/users/${await f.user()}/role`, fields: { role: "owner" } }),
  "POST /console/settings/users/:userId/delete": async (f) => ({ method: "POST", url: `/console/settings/users/${await f.user()}/delete`, fields: {} }),
};

/** The routes of signing in and out, and the console's files: open to anyone, naming no record. */
export const SESSION_ROUTES: readonly string[] = ["GET /console/sign-in", "POST /console/sign-in", "POST /console/sign-out", "GET /console/assets/:file"];

/** Actions only owners may take (every form but sign-in and sign-out). */
export const OWNER_ACTIONS = Object.keys(CONSOLE_REQUESTS).filter((key) => key.startsWith("POST ") && !SESSION_ROUTES.includes(key));
