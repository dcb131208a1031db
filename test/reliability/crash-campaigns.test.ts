import assert from "node:assert/strict";
import { it } from "node:test";
import { waitUntil } from "../support/wait.ts";
import { afternoonZone, CrashableServer, sleep, tally } from "./support.ts";

const PHONES = Array.from({ length: 30 }, (_, index) => `+1914844${String(7001 + index)}`);
const CAMPAIGN_TEXT = /^Spring sale: /;

it("kill -9 in the middle of a campaign's send: after the restart each person gets the campaign's text once", { timeout: 300_000 }, async () => {
  // Five texts a second: the send of 30 is under way for six seconds, long enough to kill it in the middle.
  const server = new CrashableServer({ REACHKIT_SMS_PER_SECOND: "5", REACHKIT_RATE_LIMITS: "opt-in=unlimited,default=unlimited" });
  try {
    await server.start();
    const zone = afternoonZone();
    for (const phone of PHONES) {
      const optIn = await server.request("POST", "/v1/subscriptions", { user: { phone }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING", singleOptIn: true });
      assert.equal(optIn.status, 202);
      assert.equal((await server.request("POST", "/v1/attributes/custom", { properties: { timeZone: zone, tier: "gold" }, user: { phone } })).status, 200);
    }
    await waitUntil("every subscription active (its welcome sent)", () => new Set(server.sentTexts().map((text) => text.to)).size === PHONES.length, 30_000);
    const segment = await server.request("POST", "/v1/segments", { name: "Gold", rule: { attribute: { name: "tier", op: "eq", value: "gold" } } });
    const campaign = await server.request("POST", "/v1/campaigns", { name: "Spring", segmentId: segment.json.id, channel: "sms", text: "Spring sale: {link}", link: "https://shop.example.com/sale" });
    assert.equal(campaign.status, 201, JSON.stringify(campaign.json));
    assert.equal((await server.request("POST", `/v1/campaigns/${campaign.json.id}/send`, {})).status, 200);
    const campaignTexts = () => server.sentTexts().filter((text) => CAMPAIGN_TEXT.test(text.body));
    await waitUntil("the send under way", () => campaignTexts().length >= 3, 90_000);
    await server.crash();
    const before = campaignTexts().length;
    assert.ok(before < PHONES.length, `the crash came after the whole send (${before} texts)`);

    await server.start();
    await waitUntil("a campaign text for every person", () => new Set(campaignTexts().map((text) => text.to)).size === PHONES.length, 60_000);
    // Time for a duplicate to show, if the restart were to send one.
    await sleep(1_500);
    assert.deepEqual([...tally(campaignTexts().map((text) => text.to))].sort(), PHONES.map((phone) => [phone, 1]));
    for (const [key, count] of tally(server.sentTexts().map((text) => text.idempotencyKey))) assert.equal(count, 1, `texts with idempotency key ${key}`);
    const results = await server.request("GET", `/v1/campaigns/${campaign.json.id}/results`);
    assert.equal(results.json.sent, PHONES.length);
    assert.equal(results.json.status, "sent");
    await server.stop();
  } finally {
    await server.dispose();
  }
});
