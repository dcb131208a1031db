import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import type { LinkClickEvent } from "../../../plugins/campaigns/index.ts";
import type { Json } from "../../support/test-kit.ts";
import { startCampaignsKit, type CampaignsTestKit } from "./support.ts";

const HOUR = 60 * 60_000;
const GOLD = { attribute: { name: "tier", op: "eq", value: "gold" } };
const SHORT = /http:\/\/localhost:3000\/l\/([A-Za-z0-9_-]{12})/g;
const codesIn = (text: string) => Array.from(text.matchAll(SHORT), (match) => match[1]!);

describe("tracked short links and results", () => {
  let t: CampaignsTestKit;
  beforeEach(async () => {
    t = await startCampaignsKit();
  });
  afterEach(() => t.stop());

  it("shortens {link} and every URL per recipient; a click redirects (302), is announced and counts; unknown or altered codes are a 404", async () => {
    const clicks: Array<[string, LinkClickEvent]> = [];
    t.kit.events.on("sms.message_link_click", (event) => void clicks.push(["sms", event]));
    await t.person("+19148440001", { tier: "gold" });
    await t.person("+19148440002", { tier: "gold" });
    const id = await t.campaign({ segmentId: await t.segment(GOLD), text: "Sale: {link} and https://shop.example.com/faq.", link: "https://shop.example.com/sale" });
    const [first] = await t.texts("+19148440001");
    const [second] = await t.texts("+19148440002");
    assert.match(first!, /^Sale: http:\/\/localhost:3000\/l\/\S{12} and http:\/\/localhost:3000\/l\/\S{12}\.$/);
    const [saleCode, faqCode] = codesIn(first!);
    assert.notDeepEqual(codesIn(second!), [saleCode, faqCode], "one link per recipient");
    const followed = await t.request({ url: `/l/${saleCode}`, token: null });
    assert.equal(followed.status, 302);
    assert.equal(followed.headers.location, "https://shop.example.com/sale");
    assert.equal((await t.request({ url: `/l/${faqCode}`, token: null })).headers.location, "https://shop.example.com/faq");
    await t.request({ url: `/l/${saleCode}`, token: null });
    assert.equal(clicks.length, 3);
    assert.equal(clicks[0]![1].campaignId, id);
    assert.equal(clicks[0]![1].address, "+19148440001");
    for (const code of ["AAAAAAAAAAAA", `${saleCode!.slice(0, 11)}${saleCode!.endsWith("A") ? "B" : "A"}`, "short", "../../etc"]) {
      const answer = await t.request({ url: `/l/${code}`, token: null });
      assert.equal(answer.status, 404, code);
      assert.equal(answer.headers.location, undefined);
    }
    const results = await t.ok("GET", `/v1/campaigns/${id}/results`);
    assert.equal(results.clicks, 3);
    assert.equal(results.uniqueClickers, 1);
  });

  it("the company's own link domain replaces the short host", async () => {
    await t.kit.plugin("campaigns").links.setDomain(t.company.companyId, "https://go.acme.example");
    await t.person("+19148440001", { tier: "gold" });
    await t.campaign({ segmentId: await t.segment(GOLD), text: "Sale: {link}", link: "https://shop.example.com/sale" });
    assert.match((await t.texts("+19148440001"))[0]!, /^Sale: https:\/\/go\.acme\.example\/l\/\S{12}$/);
    await assert.rejects(t.kit.plugin("campaigns").links.setDomain(t.company.companyId, "go.acme.example/x"), /domain/);
  });

  it("splits an A/B campaign by weight and counts each variant: sent, delivered, failed, opt-outs within 24 h, purchases within 7 days of a click", async () => {
    const phones = Array.from({ length: 40 }, (_, i) => `+1914844${String(1000 + i)}`);
    for (const phone of phones) await t.person(phone, { tier: "gold" });
    const id = await t.campaign({ segmentId: await t.segment(GOLD), link: "https://shop.example.com/sale", variants: [{ name: "short", text: "Sale {link}" }, { name: "long", text: "Big spring sale today: {link}", weight: 3 }] });
    const results = await t.ok("GET", `/v1/campaigns/${id}/results`);
    assert.equal(results.variants.short.sent + results.variants.long.sent, 40);
    assert.ok(results.variants.long.sent > results.variants.short.sent, JSON.stringify(results.variants));
    const messages = await t.kit.outbox.list({ companyId: t.company.companyId });
    const buyer = messages.find((message) => message.body.startsWith("Big"))!;
    const failed = messages.find((message) => message.body.startsWith("Sale"))!;
    await t.kit.outbox.applyReceipt({ messageId: buyer.id, providerMessageId: buyer.providerMessageId!, status: "delivered" });
    await t.kit.outbox.applyReceipt({ messageId: failed.id, providerMessageId: failed.providerMessageId!, status: "undelivered" });
    await t.request({ url: `/l/${codesIn(buyer.body)[0]}`, token: null });
    await t.clock.advance(2 * HOUR);
    await t.ok("POST", "/v1/events/ecommerce/purchase", { user: { phone: buyer.to }, items: [{ productId: "p", productVariantId: "v", price: [{ value: 30, currency: "USD" }], quantity: 2 }], orderId: "o-1" });
    await t.kit.plugin("subscriptions").unsubscribeNow(t.company.companyId, { user: { phone: failed.to }, subscriptions: [{ type: "MARKETING", channel: "TEXT" }] } as never);
    await t.clock.advance(25 * HOUR);
    await t.kit.plugin("subscriptions").unsubscribeNow(t.company.companyId, { user: { phone: buyer.to }, subscriptions: [{ type: "MARKETING", channel: "TEXT" }] } as never);
    const after = await t.ok("GET", `/v1/campaigns/${id}/results`);
    assert.deepEqual(
      { delivered: after.variants.long.delivered, purchases: after.variants.long.purchases, revenue: after.variants.long.revenue, optOuts: after.variants.long.optOuts, clicks: after.variants.long.clicks },
      { delivered: 1, purchases: 1, revenue: { USD: 60 }, optOuts: 0, clicks: 1 },
    );
    assert.deepEqual({ failed: after.variants.short.failed, optOuts: after.variants.short.optOuts, purchases: after.variants.short.purchases }, { failed: 1, optOuts: 1, purchases: 0 });
    assert.equal(after.sent, 40);
  });

  it("sends at the same local time in each person's zone", async () => {
    await t.person("+447911123456", { tier: "gold" });
    await t.person("+19148440001", { tier: "gold", timeZone: "America/Los_Angeles" });
    const created = await t.ok("POST", "/v1/campaigns", { name: "Morning", segmentId: await t.segment(GOLD), channel: "sms", text: "Good morning" }, 201);
    await t.ok("POST", `/v1/campaigns/${created.id}/send`, { sendAtLocal: "2026-03-03T11:30" });
    const sentAt = async (phone: string) => (await t.kit.outbox.list({ companyId: t.company.companyId, to: phone })).find((message) => message.kind === "campaign")?.createdAt;
    // 11:30 in London is 11:30 UTC; 11:30 in Los Angeles is 19:30 UTC.
    await t.scheduler.advance(Date.parse("2026-03-03T11:30:00Z") - t.clock.now());
    assert.equal(await sentAt("+447911123456"), Date.parse("2026-03-03T11:30:00Z"));
    assert.equal(await sentAt("+19148440001"), undefined);
    await t.scheduler.advance(8 * HOUR);
    assert.equal(await sentAt("+19148440001"), Date.parse("2026-03-03T19:30:00Z"));
    assert.equal((await t.ok("GET", `/v1/campaigns/${created.id}`)).status, "sent");
  });

  it("sends an email campaign to the segment's email subscribers", async () => {
    await t.kit.plugin("subscriptions").optInNow(t.company.companyId, { user: { email: "ada@example.com" }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING", singleOptIn: true } as never);
    await t.ok("POST", "/v1/attributes/custom", { user: { email: "ada@example.com" }, properties: { tier: "gold", firstName: "Ada" } });
    await t.scheduler.flush();
    const id = await t.campaign({ segmentId: await t.segment(GOLD), channel: "email", subject: "Hi {firstName}", text: "Our sale: https://shop.example.com/sale" });
    await t.scheduler.flush();
    const sent = t.email.sent.filter((email: Json) => email.subject === "Hi Ada");
    assert.equal(sent.length, 1);
    assert.match(sent[0].text, /^Our sale: http:\/\/localhost:3000\/l\/\S{12}$/);
    assert.equal((await t.ok("GET", `/v1/campaigns/${id}/results`)).sent, 1);
  });
});

describe("short links in journeys and transactional messages", () => {
  let t: CampaignsTestKit;
  beforeEach(async () => {
    t = await startCampaignsKit();
  });
  afterEach(() => t.stop());

  it("a journey's links and a transactional message's link become tracked short links that redirect", async () => {
    await t.person("+19148440001");
    await t.ok("POST", "/v1/journeys", { template: "welcome", steps: [{ type: "sms", text: "Welcome! Shop: https://shop.example.com/new" }] }, 201);
    await t.kit.plugin("subscriptions").optInNow(t.company.companyId, { user: { phone: "+19148440002" }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING", singleOptIn: true });
    await t.scheduler.flush();
    const journeyText = (await t.kit.outbox.list({ companyId: t.company.companyId, to: "+19148440002" })).find((message) => message.kind === "journey")!.body;
    const [journeyCode] = codesIn(journeyText);
    assert.match(journeyText, /^Welcome! Shop: http:\/\/localhost:3000\/l\/\S{12}$/);
    assert.equal((await t.request({ url: `/l/${journeyCode}`, token: null })).headers.location, "https://shop.example.com/new");
    const sent = await t.request({ method: "POST", url: "/1/messages", token: t.company.legacyToken, body: { to: "+19148440001", body: "Your order shipped.", link: "https://shop.example.com/track/1", type: "TRANSACTIONAL" } });
    assert.equal(sent.status, 200, `${sent.status} ${sent.body}`);
    const transactional = (await t.kit.outbox.list({ companyId: t.company.companyId, to: "+19148440001" })).find((message) => message.kind === "transactional")!.body;
    const [messageCode] = codesIn(transactional);
    assert.ok(messageCode, transactional);
    assert.equal((await t.request({ url: `/l/${messageCode}`, token: null })).headers.location, "https://shop.example.com/track/1");
  });
});
