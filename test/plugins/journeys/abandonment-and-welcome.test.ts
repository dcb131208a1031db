import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { items, product, startJourneysKit, variant, type JourneysTestKit } from "./support.ts";

const HOUR = 60 * 60_000;

describe("cart and browse abandonment, welcome", () => {
  let t: JourneysTestKit;
  afterEach(() => t.stop());

  it("cart abandonment: texts the carted product after the wait, once however often the same cart event arrives", async () => {
    t = await startJourneysKit();
    const journey = await t.createJourney({ template: "cart_abandonment" });
    await t.subscribe("+19148440001");
    const cart = { ...items("mug", "mug-blue", 12.5), externalEventId: "cart-1" };
    await t.event("ecommerce/add-to-cart", "+19148440001", cart);
    await t.event("ecommerce/add-to-cart", "+19148440001", cart);
    await t.event("ecommerce/add-to-cart", "+19148440001", items("mug", "mug-blue", 12.5));
    await t.scheduler.advance(HOUR - 1000);
    assert.deepEqual(await t.journeyTexts("+19148440001"), []);
    await t.scheduler.advance(1000);
    assert.deepEqual(await t.journeyTexts("+19148440001"), ["Still thinking it over? Product mug is waiting in your cart at Acme: https://shop.example.com/p/mug"]);
    await t.scheduler.advance(5 * HOUR);
    assert.equal((await t.journeyTexts("+19148440001")).length, 1);
    assert.deepEqual({ entered: (await t.stats(journey.id)).entered, sent: (await t.stats(journey.id)).sent }, { entered: 1, sent: 1 });
  });

  it("an add-to-cart that occurred more than 12 hours ago starts nothing", async () => {
    t = await startJourneysKit();
    const journey = await t.createJourney({ template: "cart_abandonment" });
    await t.subscribe("+19148440001");
    const occurredAt = new Date(t.clock.now() - 12 * HOUR - 1000).toISOString();
    await t.event("ecommerce/add-to-cart", "+19148440001", { ...items("mug", "mug-blue"), occurredAt });
    await t.scheduler.advance(2 * HOUR);
    assert.deepEqual(await t.journeyTexts("+19148440001"), []);
    assert.equal((await t.stats(journey.id)).entered, 0);
  });

  it("cart abandonment: a purchase before the send ends it, nothing is sent, and the stats say why", async () => {
    t = await startJourneysKit();
    const journey = await t.createJourney({ template: "cart_abandonment" });
    await t.subscribe("+19148440001");
    await t.event("ecommerce/add-to-cart", "+19148440001", items("mug", "mug-blue"));
    await t.scheduler.advance(HOUR / 2);
    await t.event("ecommerce/purchase", "+19148440001", { ...items("mug", "mug-blue"), orderId: "A-1" });
    await t.scheduler.advance(2 * HOUR);
    assert.deepEqual(await t.journeyTexts("+19148440001"), []);
    const stats = await t.stats(journey.id);
    assert.equal(stats.exited.purchased, 1);
    assert.equal(stats.sent, 0);
  });

  it("counts purchases within 7 days of a journey's text and their order totals", async () => {
    t = await startJourneysKit();
    const journey = await t.createJourney({ template: "cart_abandonment" });
    await t.subscribe("+19148440001");
    await t.event("ecommerce/add-to-cart", "+19148440001", items("mug", "mug-blue"));
    await t.scheduler.advance(HOUR);
    await t.event("ecommerce/purchase", "+19148440001", { ...items("mug", "mug-blue", 20, { quantity: 2 }), orderId: "A-1", externalEventId: "order-1" });
    await t.event("ecommerce/purchase", "+19148440001", { ...items("mug", "mug-blue", 20, { quantity: 2 }), orderId: "A-1", externalEventId: "order-1" });
    await t.clock.advance(8 * 24 * HOUR);
    await t.event("ecommerce/purchase", "+19148440001", { ...items("mug", "mug-blue", 5), orderId: "A-2" });
    const stats = await t.stats(journey.id);
    assert.equal(stats.purchases, 1);
    assert.deepEqual(stats.revenue, { USD: 40 });
  });

  it("browse abandonment: the last product viewed, after the wait from the first view", async () => {
    t = await startJourneysKit();
    await t.createJourney({ template: "browse_abandonment" });
    await t.subscribe("+19148440001");
    await t.event("ecommerce/product-view", "+19148440001", items("mug", "mug-blue"));
    await t.scheduler.advance(HOUR);
    await t.event("ecommerce/product-view", "+19148440001", items("cup", "cup-red"));
    await t.scheduler.advance(3 * HOUR);
    assert.deepEqual(await t.journeyTexts("+19148440001"), ["Product cup caught your eye? Take another look at Acme: https://shop.example.com/p/cup"]);
  });

  it("welcome: a new active marketing subscription gets the welcome journey's text after its wait", async () => {
    t = await startJourneysKit();
    await t.createJourney({ template: "welcome" });
    await t.subscribe("+19148440001");
    assert.deepEqual(await t.journeyTexts("+19148440001"), []);
    await t.scheduler.advance(HOUR);
    assert.deepEqual(await t.journeyTexts("+19148440001"), ["Thanks for joining Acme texts! You will hear about new arrivals, restocks and sales first."]);
  });

  it("welcome through a double opt-in: nothing while the subscription waits for its Y, the journey once it is confirmed", async () => {
    t = await startJourneysKit();
    await t.createJourney({ template: "welcome", steps: [{ type: "sms", text: "Welcome, {firstName}!" }] });
    await t.kit.plugin("subscriptions").optInNow(t.company.companyId, { user: { phone: "+19148440001", firstName: "Ada" }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING" });
    await t.scheduler.flush();
    assert.deepEqual(await t.journeyTexts("+19148440001"), []);
    const company = await t.kit.plugin("accounts").getCompany(t.company.companyId);
    await t.sms.deliverInbound({ from: "+19148440001", to: company!.senderNumber!, body: "Y" });
    await t.scheduler.flush();
    assert.deepEqual(await t.journeyTexts("+19148440001"), ["Welcome, Ada!"]);
  });

  it("price drop: people who viewed or carted the variant within the look-back and have not bought it since", async () => {
    t = await startJourneysKit();
    await t.createJourney({ template: "price_drop" });
    await t.uploadCatalog([product("mug", { name: "Blue Mug", variants: [variant({ id: "mug-blue", prices: [{ currencyCode: "USD", amount: "20.00" }] })] })]);
    for (const phone of ["+19148440001", "+19148440002", "+19148440003"]) await t.subscribe(phone);
    await t.event("ecommerce/product-view", "+19148440001", items("mug", "mug-blue"));
    await t.event("ecommerce/add-to-cart", "+19148440002", items("mug", "mug-blue"));
    await t.event("ecommerce/product-view", "+19148440003", items("mug", "mug-blue"));
    await t.event("ecommerce/purchase", "+19148440003", items("mug", "mug-blue"));
    await t.uploadCatalog([product("mug", { name: "Blue Mug", variants: [variant({ id: "mug-blue", prices: [{ currencyCode: "USD", amount: "15.00" }] })] })]);
    const text = "Price drop at Acme: Blue Mug is now $15.00. https://shop.example.com/v/mug-blue";
    assert.deepEqual(await t.journeyTexts("+19148440001"), [text]);
    assert.deepEqual(await t.journeyTexts("+19148440002"), [text]);
    assert.deepEqual(await t.journeyTexts("+19148440003"), []);
    // The same catalog uploaded again drops nothing; a second drop within the window texts nobody twice.
    await t.uploadCatalog([product("mug", { name: "Blue Mug", variants: [variant({ id: "mug-blue", prices: [{ currencyCode: "USD", amount: "15.00" }] })] })]);
    await t.uploadCatalog([product("mug", { name: "Blue Mug", variants: [variant({ id: "mug-blue", prices: [{ currencyCode: "USD", amount: "12.00" }] })] })]);
    assert.equal((await t.journeyTexts("+19148440001")).length, 1);
  });

  it("low inventory: an MMS with the product's image when the step asks for it", async () => {
    t = await startJourneysKit();
    await t.createJourney({ template: "low_inventory", steps: [{ type: "mms", text: "Almost gone: {productName}" }] });
    const images = [{ src: "https://shop.example.com/mug.png", position: 1 }];
    await t.uploadCatalog([product("mug", { name: "Blue Mug", images, variants: [variant({ id: "mug-blue", inventory: 50 })] })]);
    await t.subscribe("+19148440001");
    await t.event("ecommerce/product-view", "+19148440001", items("mug", "mug-blue"));
    await t.uploadCatalog([product("mug", { name: "Blue Mug", images, variants: [variant({ id: "mug-blue", inventory: 3 })] })]);
    const sent = (await t.kit.outbox.list({ to: "+19148440001" })).filter((message) => message.kind === "journey");
    assert.deepEqual(sent.map(({ body, mediaUrl }) => ({ body, mediaUrl })), [{ body: "Almost gone: Blue Mug", mediaUrl: "https://shop.example.com/mug.png" }]);
  });
});
