import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { product, startJourneysKit, variant, type JourneysTestKit } from "./support.ts";

const REQUEST = (variantId: string) => ({ type: "back_in_stock_request", properties: { productVariantId: variantId } });

describe("back in stock", () => {
  let t: JourneysTestKit;
  beforeEach(async () => {
    t = await startJourneysKit();
  });
  afterEach(() => t.stop());

  it("texts the people who asked while the variant was sold out, once, when a second upload makes it available", async () => {
    const journey = await t.createJourney({ template: "back_in_stock" });
    await t.uploadCatalog([product("mug", { name: "Blue Mug", variants: [variant({ id: "mug-blue", available: false, inventory: 0 })] })]);
    await t.subscribe("+19148440001");
    await t.event("custom", "+19148440001", REQUEST("mug-blue"));
    assert.deepEqual(await t.journeyTexts("+19148440001"), []);

    await t.uploadCatalog([product("mug", { name: "Blue Mug", variants: [variant({ id: "mug-blue", available: true, inventory: 5 })] })]);
    assert.deepEqual(await t.journeyTexts("+19148440001"), [
      "Blue Mug is back in stock at Acme! Get yours before it sells out again: https://shop.example.com/v/mug-blue",
    ]);
    assert.equal(t.sms.sentTo("+19148440001").filter((text) => text.body.startsWith("Blue Mug")).length, 1);

    // Sold out and back again: the request was answered; nobody is texted twice.
    await t.uploadCatalog([product("mug", { name: "Blue Mug", variants: [variant({ id: "mug-blue", available: false, inventory: 0 })] })]);
    await t.uploadCatalog([product("mug", { name: "Blue Mug", variants: [variant({ id: "mug-blue", available: true, inventory: 5 })] })]);
    assert.equal((await t.journeyTexts("+19148440001")).length, 1);
    const stats = await t.stats(journey.id);
    assert.equal(stats.entered, 1);
    assert.equal(stats.sent, 1);
  });

  it("tells the first comers first, at most messagesPerUnit per unit in stock per wave, the next wave after the interval", async () => {
    await t.createJourney({ template: "back_in_stock", pacing: { messagesPerUnit: 1, interval: "PT1H" } });
    await t.uploadCatalog([product("mug", { variants: [variant({ id: "mug-blue", available: false, inventory: 0 })] })]);
    const phones = ["+19148440001", "+19148440002", "+19148440003"];
    for (const phone of phones) {
      await t.subscribe(phone);
      await t.event("custom", phone, REQUEST("mug-blue"));
      await t.clock.advance(1000);
    }
    await t.uploadCatalog([product("mug", { variants: [variant({ id: "mug-blue", available: true, inventory: 2 })] })]);
    assert.deepEqual(
      await Promise.all(phones.map(async (phone) => (await t.journeyTexts(phone)).length)),
      [1, 1, 0],
    );
    await t.scheduler.advance(60 * 60_000);
    assert.equal((await t.journeyTexts("+19148440003")).length, 1);
  });

  it("records no request for a variant that can be bought now, and sends nothing to a person without marketing consent", async () => {
    const journey = await t.createJourney({ template: "back_in_stock" });
    await t.uploadCatalog([product("mug", { variants: [variant({ id: "mug-blue", available: true }), variant({ id: "mug-red", available: false })] })]);
    await t.subscribe("+19148440001");
    await t.event("custom", "+19148440001", REQUEST("mug-blue"));
    await t.event("custom", "+19148440002", REQUEST("mug-red"));
    await t.uploadCatalog([product("mug", { variants: [variant({ id: "mug-blue", available: true }), variant({ id: "mug-red", available: true })] })]);
    assert.deepEqual(await t.journeyTexts("+19148440001"), []);
    assert.deepEqual(await t.journeyTexts("+19148440002"), []);
    const stats = await t.stats(journey.id);
    assert.equal(stats.entered, 1);
    assert.equal(stats.skipped.no_consent, 1);
  });
});
