import type { AnyRoute } from "../../../src/index.ts";
import { SIGNATURE, SIGNATURE_HEADER, SUBSCRIBED_PHONES, type FuzzWorld } from "./fuzz-world.ts";

/**
 * One valid request of a route: the seed the fuzzer mutates. `body` is JSON for
 * JSON routes, the fields for form routes, and the bytes for raw routes.
 */
export interface RouteExample {
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  /** For raw routes: the content type the body is sent with. */
  contentType?: string;
  headers?: Record<string, string>;
}

export const routeKey = (route: Pick<AnyRoute, "method" | "path">) => `${route.method} ${route.path}`;

const [PHONE, LEAVING_PHONE] = SUBSCRIBED_PHONES;
const reminder = (w: FuzzWorld) => ({
  eventType: { uuid: w.ids.eventTypeUuid },
  phone: PHONE,
  firstName: "Ada",
  lastName: "Lovelace",
  emailAddress: "ada@example.com",
  eventDateTime: w.eventDateTime,
  subscriberTimeZone: "America/New_York",
  remindTimeOffset: "PT3H",
  followUpTimeOffset: "PT24H",
  metadata: { service: "haircut", price: 30 },
  sendEligibleSubscribersOnly: true,
});
/** A page of the signed-in console. */
const consolePage = (w: FuzzWorld, query: Record<string, string> = {}, params: Record<string, string> = {}): RouteExample => ({ params, query, headers: { cookie: w.console.session.cookie } });
/** A form of the signed-in console, with its token. */
const consoleForm = (w: FuzzWorld, body: Record<string, string> = {}, params: Record<string, string> = {}): RouteExample => ({
  params,
  body: { csrf_token: w.console.session.csrfToken, ...body },
  headers: { cookie: w.console.session.cookie },
});
const install = (w: FuzzWorld) => ({ client_id: w.oauth.clientId, redirect_uri: w.oauth.redirectUri, scope: "subscriptions:read subscriptions:write", state: "xyz" });

/**
 * A valid request for every route of the self-hosted server. The fuzzer covers
 * every route the kit serves whether or not it is listed here; a listed example
 * lets most mutated requests pass validation and reach the handler's logic, and
 * test/security/route-examples.test.ts fails for a route that has none.
 */
export const ROUTE_EXAMPLES: Readonly<Record<string, (world: FuzzWorld) => RouteExample>> = {
  "GET /v1/me": () => ({}),
  "GET /openapi.json": () => ({}),
  "GET /docs": () => ({}),
  "GET /docs/assets/:file": () => ({ params: { file: "swagger-ui-bundle.js" } }),
  "POST /v1/subscriptions": (w) => ({
    body: {
      user: { phone: PHONE, email: "ada@example.com", firstName: "Ada", lastName: "Lovelace" },
      signUpSourceId: w.ids.signUpSourceId,
      locale: { language: "en", country: "US" },
      subscriptionType: "MARKETING",
      externalIdentifiers: { clientUserId: "u-1", shopifyId: "s-1", klaviyoId: "k-1", customIdentifiers: [{ name: "crm", value: "c-1" }] },
      singleOptIn: true,
    },
  }),
  "GET /v1/subscriptions": () => ({ query: { phone: PHONE, email: "ada@example.com" } }),
  "POST /v1/subscriptions/unsubscribe": () => ({
    body: { user: { phone: LEAVING_PHONE, email: "grace@example.com" }, subscriptions: [{ type: "MARKETING", channel: "TEXT" }], notification: { language: "en-US", disabled: false } },
  }),
  "DELETE /v1/subscriptions": () => ({ query: { phone: LEAVING_PHONE } }),
  "POST /sms/inbound": (w) => ({ body: { From: PHONE, To: w.ids.senderNumber, Body: "HELP", MessageSid: "SM1" }, headers: { [SIGNATURE_HEADER]: SIGNATURE } }),
  "POST /sms/inbound/:token": (w) => ({
    params: { token: w.ids.inboundWebhookPath.split("/").pop() ?? "" },
    body: { From: LEAVING_PHONE, To: w.ids.senderNumber, Body: "STOP", MessageSid: "SM2" },
  }),
  "POST /v1/graphql": () => ({
    body: {
      query: `query Q($phone: String) { a: viewer { installedApplication { installerCompany { id name } } } }`,
      variables: { phone: PHONE },
      operationName: "Q",
    },
  }),
  "GET /integrations/oauth-install": (w) => ({ query: install(w), headers: { cookie: w.install.cookie } }),
  "POST /integrations/oauth-install/login": (w) => ({
    body: { ...install(w), csrf_token: w.install.csrfToken, email: w.oauth.email, password: w.oauth.password },
    headers: { cookie: w.install.cookie },
  }),
  "POST /integrations/oauth-install": (w) => ({
    body: { ...install(w), csrf_token: w.install.csrfToken, decision: "authorize" },
    headers: { cookie: w.install.cookie },
  }),
  "POST /v1/authorization-codes/tokens": (w) => ({
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code: "a-used-or-unknown-code",
      redirect_uri: w.oauth.redirectUri,
      client_id: w.oauth.clientId,
      client_secret: w.oauth.clientSecret,
    }).toString(),
    contentType: "application/x-www-form-urlencoded",
  }),
  "POST /1/add-subscribers": () => ({
    body: { phone: "914-844-0002", email: "grace@example.com", first_name: "Grace", visitorId: "v-1", creativeId: "c-7", metadata: { plan: "gold" } },
  }),
  "POST /1/subscribers/unsubscribe": () => ({ body: { phone: LEAVING_PHONE, sendOptOutMessage: "true" } }),
  "POST /1/messages": () => ({ body: { to: PHONE, body: "Your order #1001 has shipped.", type: "TRANSACTIONAL", mediaUrl: "https://cdn.example/a.png", link: "https://acme.example/t/1" } }),
  "POST /v1/messages": () => ({ body: { to: PHONE, body: "Your table is ready.", type: "TRANSACTIONAL", messageId: "campaign-7" } }),
  "POST /v1/privacy/delete-request": () => ({ body: { subjectPhone: "+19148440009", subjectEmail: "ada@example.com", requestMsg: "please", clientUserId: "u-1" } }),
  "GET /v1/privacy/delete-request/:id": (w) => ({ params: { id: w.ids.privacyRequestId } }),
  "POST /privacy/delete-request": () => ({ body: { subjectPhone: "+19148440009", subjectEmail: "ada@example.com", requestMsg: "please" } }),
  "GET /v1/webhooks": () => ({}),
  "POST /v1/webhooks": () => ({ body: { url: "https://hooks.example/other", events: ["sms.subscribed", "email.unsubscribed", "catalog.variant.back_in_stock"] } }),
  "PUT /v1/webhooks/:webhookId": (w) => ({ params: { webhookId: w.ids.webhookId }, body: { url: "https://hooks.example/moved", events: ["sms.sent"], disabled: false } }),
  "DELETE /v1/webhooks/:webhookId": (w) => ({ params: { webhookId: w.ids.webhookId } }),
  "POST /v1/product-catalog/uploads": () => ({ body: { validateOnly: true } }),
  "GET /v1/product-catalog/uploads": () => ({}),
  "GET /v1/product-catalog/uploads/:uploadId": (w) => ({ params: { uploadId: w.ids.uploadId } }),
  "POST /events/types": () => ({ body: { type: "Beard trim" } }),
  "GET /events/types/:uuid": (w) => ({ params: { uuid: w.ids.eventTypeUuid } }),
  "POST /events/types/messages": (w) => ({ body: { eventType: { uuid: w.ids.eventTypeUuid }, messageType: "CONFIRMATION", text: "Hi {firstName}, see you {eventDate} at {eventTime}." } }),
  "GET /events/types/messages/:uuid": (w) => ({ params: { uuid: w.ids.messageUuid } }),
  "PUT /events/types/messages/:uuid": (w) => ({
    params: { uuid: w.ids.messageUuid },
    body: { eventType: { uuid: w.ids.eventTypeUuid }, messageType: "REMINDER", text: "Reminder: {service} at {eventTime} today." },
  }),
  "POST /events/reminders": (w) => ({ body: reminder(w) }),
  "GET /events/reminders/:uuid": (w) => ({ params: { uuid: w.ids.reminderUuid } }),
  "PUT /events/reminders/:uuid": (w) => ({ params: { uuid: w.ids.reminderUuid }, body: { ...reminder(w), externalEventId: "appt-2" } }),
  "POST /events/reminders/:uuid/cancel": (w) => ({ params: { uuid: w.ids.cancelReminderUuid } }),
  "POST /events/reminders/:uuid/no-show": (w) => ({ params: { uuid: w.ids.noShowReminderUuid } }),
  "POST /v1/events/custom": () => ({
    body: {
      type: "Order Shipped",
      properties: { orderId: "1001", total: 12.5, items: [{ sku: "m-1" }] },
      externalEventId: "0b6c2a4e-5d1f-4d7a-9f0e-3c1b2a4d5e6f",
      occurredAt: "2026-03-01T11:38:29.000Z",
      user: { phone: PHONE, email: "ada@example.com", externalIdentifiers: { clientUserId: "u-1", customIdentifiers: [{ name: "loyaltyId", value: "L-9" }] } },
    },
  }),
  ...Object.fromEntries(
    ["product-view", "add-to-cart", "purchase"].map((path) => [
      `POST /v1/events/ecommerce/${path}`,
      () => ({
        body: {
          items: [{ productId: "p-1", productVariantId: "p-1-blue", productImage: "https://acme.example/m.png", productUrl: "https://acme.example/p/1", name: "Mug", price: [{ value: 12.5, currency: "USD" }], quantity: 1 }],
          occuredAt: "2026-03-01T11:38:29+0000",
          user: { email: "ada@example.com", externalIdentifiers: { customIdentifiers: { loyaltyId: "L-9" } } },
          ...(path === "purchase" ? { orderId: "A-1001", salesChannel: { channelType: "WEB" } } : {}),
        },
      }),
    ]),
  ),
  "POST /v1/attributes/custom": () => ({ body: { properties: { tier: "gold", visits: 3, vip: true }, user: { phone: PHONE } } }),
  "GET /v1/attributes/custom": () => ({ query: { email: "ada@example.com" } }),
  "POST /v1/identity-resolution/user-identifiers": () => ({
    body: { phone: PHONE, email: "ada@example.com", clientUserId: "u-1", shopifyId: "s-1", klaviyoId: "k-1", customIdentifiers: [{ name: "loyaltyId", value: "L-9" }] },
  }),
  "POST /v1/journeys": () => ({
    body: {
      template: "cart_abandonment",
      name: "Carts left behind",
      audience: { attributes: { tier: "gold" } },
      steps: [{ type: "wait", duration: "PT2H" }, { type: "mms", text: "{firstName}, {productName} is still in your cart: {productLink} ({price})" }],
      exitOn: ["purchase"],
      window: "P1D",
      status: "paused",
    },
  }),
  "GET /v1/journeys": () => ({}),
  "GET /v1/journeys/:id": (w) => ({ params: { id: w.ids.journeyId } }),
  "PUT /v1/journeys/:id": (w) => ({ params: { id: w.ids.journeyId }, body: { name: "Carts", steps: [{ type: "sms", text: "Back for {productName}?" }], window: "PT12H", status: "active" } }),
  "POST /v1/journeys/:id/pause": (w) => ({ params: { id: w.ids.journeyId } }),
  "POST /v1/journeys/:id/resume": (w) => ({ params: { id: w.ids.journeyId } }),
  "DELETE /v1/journeys/:id": (w) => ({ params: { id: w.ids.journeyId } }),
  "GET /v1/journeys/:id/stats": (w) => ({ params: { id: w.ids.journeyId } }),
  "POST /v1/segments": () => ({
    body: { name: "Gold buyers", rule: { and: [{ consent: { channel: "TEXT", type: "MARKETING", state: "active" } }, { or: [{ attribute: { name: "tier", op: "eq", value: "gold" } }, { not: { event: { kind: "purchase", within: "P30D", did: false } } }] }, { product: { action: "bought", within: "P90D", category: "shoes", minPrice: 10, maxPrice: 200 } }] } },
  }),
  "GET /v1/segments": () => ({}),
  "GET /v1/segments/:id": (w) => ({ params: { id: w.ids.segmentId } }),
  "PUT /v1/segments/:id": (w) => ({ params: { id: w.ids.segmentId }, body: { name: "Gold", rule: { event: { type: "Signed up", within: "P7D", properties: { plan: "pro" } } } } }),
  "DELETE /v1/segments/:id": (w) => ({ params: { id: w.ids.segmentId } }),
  "GET /v1/segments/:id/preview": (w) => ({ params: { id: w.ids.segmentId } }),
  "POST /v1/campaigns": (w) => ({
    body: { name: "Spring sale", segmentId: w.ids.segmentId, channel: "sms", link: "https://shop.example.com/sale", variants: [{ name: "A", text: "{firstName}, 20% off: {link}", weight: 1 }, { name: "B", text: "Sale at {companyName}: {link}", weight: 2 }] },
  }),
  "GET /v1/campaigns": () => ({}),
  "GET /v1/campaigns/:id": (w) => ({ params: { id: w.ids.campaignId } }),
  "PUT /v1/campaigns/:id": (w) => ({ params: { id: w.ids.campaignId }, body: { name: "Spring sale 2", channel: "email", subject: "Sale", text: "Hi {firstName}" } }),
  "DELETE /v1/campaigns/:id": (w) => ({ params: { id: w.ids.campaignId } }),
  "POST /v1/campaigns/:id/send": (w) => ({ params: { id: w.ids.campaignId }, body: { sendAtLocal: "2030-01-01T10:00" } }),
  "POST /v1/campaigns/:id/cancel": (w) => ({ params: { id: w.ids.campaignId } }),
  "GET /v1/campaigns/:id/estimate": (w) => ({ params: { id: w.ids.campaignId } }),
  "GET /v1/campaigns/:id/results": (w) => ({ params: { id: w.ids.campaignId } }),
  "POST /v1/short-links": () => ({ body: { url: "https://shop.example.com/sale?utm_source=sms" } }),
  "GET /l/:code": (w) => ({ params: { code: w.ids.shortCode } }),
  "GET /console/assets/:file": () => ({ params: { file: "console.js" } }),
  "GET /console/sign-in": (w) => ({ query: { next: "/console/messages" }, headers: { cookie: w.console.signInForm.cookie } }),
  "POST /console/sign-in": (w) => ({
    body: { csrf_token: w.console.signInForm.csrfToken, email: w.oauth.email, password: w.oauth.password, next: "/console" },
    headers: { cookie: w.console.signInForm.cookie },
  }),
  "POST /console/sign-out": (w) => ({ body: { csrf_token: w.console.leaving.csrfToken }, headers: { cookie: w.console.leaving.cookie } }),
  "GET /console": (w) => consolePage(w, { days: "7" }),
  "GET /console/subscribers": (w) => consolePage(w, { q: "+1914" }),
  "GET /console/subscriber": (w) => consolePage(w, { phone: PHONE }),
  "GET /console/messages": (w) => consolePage(w, { status: "sent", to: PHONE }),
  "GET /console/journeys": (w) => consolePage(w, { done: "paused" }),
  "GET /console/journeys/:journeyId": (w) => consolePage(w, {}, { journeyId: w.ids.journeyId }),
  "POST /console/journeys/:journeyId/pause": (w) => consoleForm(w, {}, { journeyId: w.ids.journeyId }),
  "POST /console/journeys/:journeyId/resume": (w) => consoleForm(w, {}, { journeyId: w.ids.journeyId }),
  "POST /console/journeys/:journeyId/delete": (w) => consoleForm(w, {}, { journeyId: w.ids.journeyId }),
  "GET /console/catalog": (w) => consolePage(w),
  "POST /console/catalog/uploads": (w) => consoleForm(w, { validateOnly: "true" }),
  "GET /console/catalog/uploads/:uploadId": (w) => consolePage(w, {}, { uploadId: w.ids.uploadId }),
  "GET /console/catalog/uploads/:uploadId/progress": (w) => consolePage(w, {}, { uploadId: w.ids.uploadId }),
  "GET /console/products": (w) => consolePage(w, { q: "p-" }),
  "GET /console/products/:productId": (w) => consolePage(w, {}, { productId: "p-1" }),
  "GET /console/campaigns": (w) => consolePage(w, { after: "" }),
  "POST /console/campaigns": (w) => consoleForm(w, { name: "Weekend", segmentId: w.ids.segmentId, channel: "sms", text: "Weekend sale" }),
  "GET /console/campaigns/:campaignId": (w) => consolePage(w, { done: "sent" }, { campaignId: w.ids.campaignId }),
  "POST /console/campaigns/:campaignId/send": (w) => consoleForm(w, { sendAt: "2026-12-01T15:00:00Z" }, { campaignId: w.ids.campaignId }),
  "POST /console/campaigns/:campaignId/cancel": (w) => consoleForm(w, {}, { campaignId: w.ids.campaignId }),
  "GET /console/segments": (w) => consolePage(w, {}),
  "GET /console/segments/:segmentId": (w) => consolePage(w, {}, { segmentId: w.ids.segmentId }),
  "GET /console/webhooks": (w) => consolePage(w, { done: "created" }),
  "POST /console/webhooks": (w) => consoleForm(w, { applicationId: w.console.applicationId, url: "https://hooks.example/console", "event:sms.sent": "yes" }),
  "GET /console/webhooks/:webhookId": (w) => consolePage(w, { status: "failed" }, { webhookId: w.ids.webhookId }),
  "POST /console/webhooks/:webhookId/disable": (w) => consoleForm(w, {}, { webhookId: w.ids.webhookId }),
  "POST /console/webhooks/:webhookId/enable": (w) => consoleForm(w, {}, { webhookId: w.ids.webhookId }),
  "POST /console/webhooks/:webhookId/delete": (w) => consoleForm(w, {}, { webhookId: w.ids.webhookId }),
  "POST /console/webhooks/:webhookId/deliveries/:deliveryId/redeliver": (w) => consoleForm(w, {}, { webhookId: w.ids.webhookId, deliveryId: "msg_unknown" }),
  "POST /console/webhooks/signing-keys/:applicationId/rotate": (w) => consoleForm(w, { overlapHours: "1" }, { applicationId: w.console.applicationId }),
  "GET /console/reminders": (w) => consolePage(w, { state: "scheduled", phone: PHONE }),
  "GET /console/reminders/:uuid": (w) => consolePage(w, {}, { uuid: w.ids.reminderUuid }),
  "POST /console/reminders/:uuid/cancel": (w) => consoleForm(w, {}, { uuid: w.ids.cancelReminderUuid }),
  "POST /console/reminders/:uuid/no-show": (w) => consoleForm(w, {}, { uuid: w.ids.noShowReminderUuid }),
  "GET /console/privacy": (w) => consolePage(w, { done: "requested" }),
  "POST /console/privacy": (w) => consoleForm(w, { subjectPhone: "+19148440009", subjectEmail: "ada@example.com", requestMsg: "please" }),
  "GET /console/settings": (w) => consolePage(w, { done: "sender-number" }),
  "POST /console/settings/sign-up-units": (w) => consoleForm(w, { type: "MARKETING", language: "fr", country: "CA", name: "Quebec" }),
  "POST /console/settings/sender-number": (w) => consoleForm(w, { number: "+15557654321" }),
  "POST /console/settings/message-prefix": (w) => consoleForm(w, { template: "{company}: " }),
  "POST /console/settings/send-rules": (w) => consoleForm(w, { timeZone: "America/Chicago", quiet: "on", quietStart: "21:00", quietEnd: "09:00", dailyCap: "2" }),
  "POST /console/settings/api-keys": (w) => consoleForm(w, { name: "Sync", "scope:subscriptions:read": "yes" }),
  "POST /console/settings/api-keys/:credentialId/revoke": (w) => consoleForm(w, {}, { credentialId: w.console.credentialId }),
  "POST /console/settings/oauth-apps": (w) => consoleForm(w, { name: "Loyalty", redirectUris: "https://loyalty.example/callback" }),
  "POST /console/settings/oauth-apps/:applicationId/rotate-secret": (w) => consoleForm(w, {}, { applicationId: w.console.applicationId }),
  "POST /console/settings/users": (w) => consoleForm(w, { email: "support@acme.example", password: "a long enough password", role: "viewer" }),
  "POST /console/settings/users/:userId/role": (w) => consoleForm(w, { role: "owner" }, { userId: w.console.userIds[0] }),
  "POST /console/settings/users/:userId/delete": (w) => consoleForm(w, {}, { userId: w.console.userIds[1] }),
  "PUT /uploads/:key": (w) => {
    const url = new URL(w.ids.uploadPath, "http://x");
    return {
      params: { key: decodeURIComponent(url.pathname.slice("/uploads/".length)) },
      query: Object.fromEntries(url.searchParams),
      body: '{"id":"p-1","title":"Mug","price":"12.50","link":"https://acme.example/p/1"}\n',
      contentType: "application/x-ndjson",
    };
  },
  "GET /email/confirm": (w) => ({ query: { token: w.ids.confirmEmailToken } }),
  "GET /email/unsubscribe": (w) => ({ query: { token: w.ids.unsubscribeEmailToken } }),
  "POST /email/unsubscribe": (w) => ({ query: { token: w.ids.unsubscribeEmailToken }, body: "List-Unsubscribe=One-Click", contentType: "application/x-www-form-urlencoded" }),
};
