import assert from "node:assert/strict";
import { it } from "node:test";
import { waitUntil } from "../support/wait.ts";
import { afternoonZone, CrashableServer, sleep, tally } from "./support.ts";

const PHONES = Array.from({ length: 6 }, (_, index) => `+1914844${String(6001 + index)}`);
const JOURNEY_TEXT = /^Come back for Mug/;

it("kill -9 while journey waits are pending: after the restart each person gets the journey's text once", { timeout: 90_000 }, async () => {
  const server = new CrashableServer();
  try {
    await server.start();
    const journey = await server.request("POST", "/v1/journeys", {
      template: "cart_abandonment",
      steps: [{ type: "wait", duration: "PT4S" }, { type: "sms", text: "Come back for {productName}: {productLink}" }],
    });
    assert.equal(journey.status, 201, JSON.stringify(journey.json));
    const zone = afternoonZone();
    for (const phone of PHONES) {
      const optIn = await server.request("POST", "/v1/subscriptions", { user: { phone }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING", singleOptIn: true });
      assert.equal(optIn.status, 202);
      assert.equal((await server.request("POST", "/v1/attributes/custom", { properties: { timeZone: zone }, user: { phone } })).status, 200);
    }
    await waitUntil("every subscription active (its welcome sent)", () => new Set(server.sentTexts().map((text) => text.to)).size === PHONES.length, 20_000);
    for (const phone of PHONES) {
      const item = { productId: "mug", productVariantId: "mug-blue", name: "Mug", productUrl: "https://shop.example.com/p/mug", price: [{ value: 12 }] };
      assert.equal((await server.request("POST", "/v1/events/ecommerce/add-to-cart", { items: [item], user: { phone } })).status, 200);
    }
    await server.crash();
    assert.equal(server.sentTexts().filter((text) => JOURNEY_TEXT.test(text.body)).length, 0, "no journey text before the crash");

    // Down while every wait falls due.
    await sleep(5_000);
    await server.start();
    const journeyTexts = () => server.sentTexts().filter((text) => JOURNEY_TEXT.test(text.body));
    await waitUntil("a journey text for every person", () => new Set(journeyTexts().map((text) => text.to)).size === PHONES.length, 30_000);
    // Time for a duplicate to show, if the restart were to send one.
    await sleep(1_500);
    assert.deepEqual([...tally(journeyTexts().map((text) => text.to))].sort(), PHONES.map((phone) => [phone, 1]));
    for (const [key, count] of tally(server.sentTexts().map((text) => text.idempotencyKey))) assert.equal(count, 1, `texts with idempotency key ${key}`);
    const stats = await server.request("GET", `/v1/journeys/${journey.json.id}/stats`);
    assert.equal(stats.json.sent, PHONES.length);
    await server.stop();
  } finally {
    await server.dispose();
  }
});
