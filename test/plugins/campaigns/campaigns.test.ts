import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { CAMPAIGN_SENDER } from "../../../plugins/campaigns/index.ts";
import type { Json } from "../../support/test-kit.ts";
import { startCampaignsKit, type CampaignsTestKit } from "./support.ts";

const HOUR = 60 * 60_000;
const paths = (body: Json) => body.error.details.map((detail: Json) => detail.path);
const GOLD = { attribute: { name: "tier", op: "eq", value: "gold" } };

describe("segments and campaigns", () => {
  let t: CampaignsTestKit;
  beforeEach(async () => {
    t = await startCampaignsKit();
  });
  afterEach(() => t.stop());

  it("previews a segment by attributes, consent and events, combined with and/or/not", async () => {
    await t.person("+19148440001", { tier: "gold", visits: 5 });
    await t.person("+19148440002", { tier: "silver", visits: 1 });
    await t.person("+19148440003", { tier: "gold", visits: 2 });
    await t.ok("POST", "/v1/events/custom", { type: "Signed up", user: { phone: "+19148440003" }, properties: { plan: "pro" } });
    await t.kit.plugin("subscriptions").unsubscribeNow(t.company.companyId, { user: { phone: "+19148440001" }, subscriptions: [{ type: "MARKETING", channel: "TEXT" }] } as never);
    const size = async (rule: Json) => (await t.ok("GET", `/v1/segments/${await t.segment(rule)}/preview`)).size;
    assert.equal(await size(GOLD), 2);
    assert.equal(await size({ attribute: { name: "visits", op: "gte", value: 2 } }), 2);
    assert.equal(await size({ and: [GOLD, { consent: { channel: "TEXT" } }] }), 1);
    assert.equal(await size({ consent: { channel: "TEXT", state: "unsubscribed" } }), 1);
    assert.equal(await size({ event: { type: "Signed up", within: "P7D", properties: { plan: "pro" } } }), 1);
    assert.equal(await size({ event: { type: "Signed up", within: "P7D", did: false } }), 2);
    assert.equal(await size({ or: [{ not: GOLD }, { event: { type: "Signed up", within: "P1D" } }] }), 2);
    const preview = await t.ok("GET", `/v1/segments/${await t.segment(GOLD)}/preview`);
    assert.deepEqual(preview.sample.map((person: Json) => person.phone).sort(), ["+19148440001", "+19148440003"]);
  });

  it("refuses an invalid segment or campaign with a 400 naming each field, and stores nothing", async () => {
    const segmentCases: Array<[Json, string[]]> = [
      [{ name: "x" }, ["rule"]],
      [{ name: "x", rule: { attribute: { name: "tier", op: "like", value: 1 } } }, ["rule.attribute.op"]],
      [{ name: "x", rule: { and: [GOLD, { event: { within: "forever" } }] } }, ["rule.and.1.event.within"]],
      [{ name: "x", rule: { or: [] } }, ["rule.or"]],
      [{ name: "x", rule: { tier: "gold" } }, ["rule"]],
      [{ name: "x", rule: { attribute: { name: "tier" } } }, ["rule.attribute.value"]],
      [{ name: "", rule: GOLD }, ["name"]],
    ];
    for (const [body, expected] of segmentCases) {
      const response = await t.request({ method: "POST", url: "/v1/segments", body });
      assert.equal(response.status, 400, `${JSON.stringify(body)}: ${response.body}`);
      assert.deepEqual(paths(t.json(response)), expected, JSON.stringify(body));
    }
    assert.deepEqual((await t.ok("GET", "/v1/segments")).segments, []);
    const segmentId = await t.segment(GOLD);
    const campaignCases: Array<[Json, string[]]> = [
      [{ name: "x", segmentId, channel: "fax", text: "Hi" }, ["channel"]],
      [{ name: "x", segmentId: "nope", channel: "sms", text: "Hi" }, ["segmentId"]],
      [{ name: "x", segmentId, channel: "sms" }, ["text"]],
      [{ name: "x", segmentId, channel: "sms", text: "Hi {nickname}" }, ["text"]],
      [{ name: "x", segmentId, channel: "sms", text: "Sale: {link}" }, ["link"]],
      [{ name: "x", segmentId, channel: "email", text: "Hi" }, ["subject"]],
      [{ name: "x", segmentId, channel: "mms", text: "Hi" }, ["mediaUrl"]],
      [{ name: "x", segmentId, channel: "sms", variants: [{ text: "A" }] }, ["variants"]],
      [{ name: "x", segmentId, channel: "sms", variants: [{ text: "A" }, { text: "B", weight: 0 }] }, ["variants.1.weight"]],
    ];
    for (const [body, expected] of campaignCases) {
      const response = await t.request({ method: "POST", url: "/v1/campaigns", body });
      assert.equal(response.status, 400, `${JSON.stringify(body)}: ${response.body}`);
      assert.deepEqual(paths(t.json(response)), expected, JSON.stringify(body));
    }
    assert.deepEqual((await t.ok("GET", "/v1/campaigns")).campaigns, []);
  });

  it("sends now to the segment: marketing consent checked at send time, one text per person, results counted", async () => {
    await t.person("+19148440001", { tier: "gold", firstName: "Ada" });
    await t.person("+19148440002", { tier: "gold", firstName: "Bo" });
    await t.person("+19148440003", { tier: "silver", firstName: "Cy" });
    const segmentId = await t.segment(GOLD);
    const created = await t.ok("POST", "/v1/campaigns", { name: "Sale", segmentId, channel: "sms", text: "Hi {firstName}, 20% off at {companyName} today" }, 201);
    // Opted out after the segment was made, before the send: skipped.
    await t.kit.plugin("subscriptions").unsubscribeNow(t.company.companyId, { user: { phone: "+19148440002" }, subscriptions: [{ type: "MARKETING", channel: "TEXT" }] } as never);
    assert.equal((await t.ok("POST", `/v1/campaigns/${created.id}/send`, {})).status, "scheduled");
    await t.scheduler.flush();
    assert.deepEqual(await t.texts("+19148440001"), ["Hi Ada, 20% off at Acme today"]);
    assert.deepEqual(await t.texts("+19148440002"), []);
    assert.deepEqual(await t.texts("+19148440003"), []);
    const results = await t.ok("GET", `/v1/campaigns/${created.id}/results`);
    assert.equal(results.status, "sent");
    assert.equal(results.audience, 2);
    assert.equal(results.sent, 1);
    assert.equal(results.skipped.no_consent, 1);
    assert.equal((await t.request({ method: "POST", url: `/v1/campaigns/${created.id}/send`, body: {} })).status, 409);
  });

  it("a scheduled campaign sends at its time, defers to the end of quiet hours, and shares the daily cap", async () => {
    await t.kit.plugin("sendRules").policies.set(t.company.companyId, { dailyCap: 1 });
    await t.person("+19148440001", { tier: "gold" });
    await t.person("+19148440002", { tier: "gold" });
    const segmentId = await t.segment(GOLD);
    const first = await t.campaign({ segmentId, text: "First" });
    assert.equal((await t.ok("GET", `/v1/campaigns/${first}`)).status, "sent");
    const created = await t.ok("POST", "/v1/campaigns", { name: "Later", segmentId, channel: "sms", text: "Second" }, 201);
    // 21:00 in New York: inside quiet hours (20:00 to 11:00).
    await t.ok("POST", `/v1/campaigns/${created.id}/send`, { sendAt: "2026-03-03T02:00:00Z" });
    await t.scheduler.advance(10 * HOUR);
    assert.deepEqual(await t.texts("+19148440001"), ["First"]);
    assert.equal((await t.ok("GET", `/v1/campaigns/${created.id}/results`)).pending, 2);
    // 11:00 on the next local day: the cap's day has turned, so the second text goes.
    await t.scheduler.advance(13 * HOUR);
    assert.deepEqual(await t.texts("+19148440001"), ["First", "Second"]);
    const third = await t.campaign({ segmentId, text: "Third" });
    assert.deepEqual(await t.texts("+19148440002"), ["First", "Second"]);
    assert.equal((await t.ok("GET", `/v1/campaigns/${third}/results`)).skipped.frequency_cap, 2);
  });

  it("cancelling before the send or during it sends nothing more", async () => {
    const phones = ["+19148440001", "+19148440002", "+19148440003", "+19148440004"];
    for (const phone of phones) await t.person(phone, { tier: "gold" });
    const segmentId = await t.segment(GOLD);
    const scheduled = await t.ok("POST", "/v1/campaigns", { name: "Later", segmentId, channel: "sms", text: "Later" }, 201);
    await t.ok("POST", `/v1/campaigns/${scheduled.id}/send`, { sendAt: "2026-03-02T18:00:00Z" });
    assert.equal((await t.ok("POST", `/v1/campaigns/${scheduled.id}/cancel`)).status, "cancelled");
    await t.scheduler.advance(2 * HOUR);
    for (const phone of phones) assert.deepEqual(await t.texts(phone), []);
    await t.stop();
    t = await startCampaignsKit({ sendPageSize: 2 });
    for (const phone of phones) await t.person(phone, { tier: "gold" });
    const during = await t.ok("POST", "/v1/campaigns", { name: "Now", segmentId: await t.segment(GOLD), channel: "sms", text: "Now" }, 201);
    await t.ok("POST", `/v1/campaigns/${during.id}/send`, {});
    // The audience job, then the first send page of two, as their jobs would run them.
    const sender = t.kit.resolve(CAMPAIGN_SENDER);
    await sender.readAudience({ campaignId: during.id });
    await sender.send({ campaignId: during.id });
    await t.ok("POST", `/v1/campaigns/${during.id}/cancel`);
    await t.scheduler.flush();
    const sent = (await Promise.all(phones.map((phone) => t.texts(phone)))).flat();
    const results = await t.ok("GET", `/v1/campaigns/${during.id}/results`);
    assert.equal(sent.length, 2);
    assert.equal(results.sent, 2);
    assert.equal(results.cancelled, 2);
    assert.equal((await t.request({ method: "POST", url: `/v1/campaigns/${during.id}/cancel` })).status, 409);
  });
});
