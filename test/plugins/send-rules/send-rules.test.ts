import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { items, startJourneysKit, type JourneysTestKit } from "../journeys/support.ts";

const HOUR = 60 * 60_000;
const text = (t: JourneysTestKit, to: string, n: number, messageType: "MARKETING" | "TRANSACTIONAL" = "MARKETING") =>
  t.kit.plugin("sendRules").send({ companyId: t.company.companyId, to, messageType, body: `Offer ${n}`, kind: "campaign", idempotencyKey: `campaign-${n}` });

describe("send rules", () => {
  let t: JourneysTestKit;
  afterEach(() => t.stop());

  it("defers a journey text that falls in quiet hours to their end in the person's zone, never dropping it", async () => {
    t = await startJourneysKit({ at: "2026-03-02T00:00:00.000Z" }); // 19:00 in New York
    const journey = await t.createJourney({ template: "cart_abandonment" });
    await t.subscribe("+19148440001");
    await t.event("ecommerce/add-to-cart", "+19148440001", items("mug", "mug-blue"));
    await t.scheduler.advance(HOUR); // 20:00: quiet
    assert.deepEqual(await t.journeyTexts("+19148440001"), []);
    await t.scheduler.advance(15 * HOUR - 1000); // 10:59:59
    assert.deepEqual(await t.journeyTexts("+19148440001"), []);
    await t.scheduler.advance(1000);
    assert.equal((await t.journeyTexts("+19148440001")).length, 1);
    const stats = await t.stats(journey.id);
    assert.equal(stats.deferredForQuietHours, 1);
    assert.equal(stats.sent, 1);
  });

  it("reads the person's zone from their profile first: a London profile is texted at 11:00 London time", async () => {
    t = await startJourneysKit({ at: "2026-03-02T09:00:00.000Z" }); // 09:00 London, 04:00 New York
    await t.createJourney({ template: "welcome", steps: [{ type: "sms", text: "Welcome!" }] });
    await t.request({ method: "POST", url: "/v1/attributes/custom", body: { properties: { timeZone: "Europe/London" }, user: { phone: "+19148440001" } } });
    await t.subscribe("+19148440001");
    await t.scheduler.advance(2 * HOUR - 1000);
    assert.deepEqual(await t.journeyTexts("+19148440001"), []);
    await t.scheduler.advance(1000);
    assert.deepEqual(await t.journeyTexts("+19148440001"), ["Welcome!"]);
  });

  it("checks consent when the text would go: a person who opted out while waiting is skipped", async () => {
    t = await startJourneysKit();
    const journey = await t.createJourney({ template: "cart_abandonment" });
    await t.subscribe("+19148440001");
    await t.event("ecommerce/add-to-cart", "+19148440001", items("mug", "mug-blue"));
    const company = await t.kit.plugin("accounts").getCompany(t.company.companyId);
    await t.sms.deliverInbound({ from: "+19148440001", to: company!.senderNumber!, body: "STOP" });
    await t.scheduler.advance(HOUR);
    assert.deepEqual(await t.journeyTexts("+19148440001"), []);
    assert.equal((await t.stats(journey.id)).skipped.no_consent, 1);
  });

  it("caps marketing texts per person per local day across journeys and campaigns; transactional texts pass", async () => {
    t = await startJourneysKit({ sendRules: { dailyCap: 2 } });
    const journey = await t.createJourney({ template: "cart_abandonment" });
    await t.subscribe("+19148440001");
    await t.kit.plugin("subscriptions").optInNow(t.company.companyId, { user: { phone: "+19148440001" }, locale: { language: "en", country: "US" }, subscriptionType: "TRANSACTIONAL", singleOptIn: true });
    assert.equal((await text(t, "+19148440001", 1)).status, "sent");
    assert.equal((await text(t, "+19148440001", 1)).status, "sent", "the same text again is the same send, not a second one");
    assert.equal((await text(t, "+19148440001", 2)).status, "sent");
    assert.deepEqual(await text(t, "+19148440001", 3), { status: "skipped", reason: "frequency_cap" });
    assert.equal((await text(t, "+19148440001", 4, "TRANSACTIONAL")).status, "sent");
    await t.event("ecommerce/add-to-cart", "+19148440001", items("mug", "mug-blue"));
    await t.scheduler.advance(HOUR);
    assert.deepEqual(await t.journeyTexts("+19148440001"), []);
    assert.equal((await t.stats(journey.id)).skipped.frequency_cap, 1);
    // The next local day in New York, outside quiet hours.
    await t.clock.advance(23 * HOUR);
    assert.equal((await text(t, "+19148440001", 5)).status, "sent");
  });

  it("skips a text whose macro has no value for the person, recording why, instead of sending it broken", async () => {
    t = await startJourneysKit();
    const journey = await t.createJourney({ template: "welcome", steps: [{ type: "sms", text: "Hi {firstName}, welcome to {companyName}!" }] });
    await t.subscribe("+19148440001");
    await t.subscribe("+19148440002", "Grace");
    await t.scheduler.flush();
    assert.deepEqual(await t.journeyTexts("+19148440001"), []);
    assert.deepEqual(await t.journeyTexts("+19148440002"), ["Hi Grace, welcome to Acme!"]);
    assert.equal((await t.stats(journey.id)).skipped.missing_macro, 1);
  });

  it("keeps each company's time zone, quiet hours and cap, refusing invalid ones naming the field", async () => {
    t = await startJourneysKit();
    const policies = t.kit.plugin("sendRules").policies;
    assert.deepEqual(await policies.get(t.company.companyId), { timeZone: "America/New_York", quietHours: { start: "20:00", end: "11:00" }, dailyCap: 3 });
    await assert.rejects(policies.set(t.company.companyId, { timeZone: "Mars/Base", quietHours: { start: "25:00", end: "11:00" }, dailyCap: 0 }), (error: { details: Array<{ path: string }> }) => {
      assert.deepEqual(error.details.map((detail) => detail.path), ["timeZone", "quietHours.start", "dailyCap"]);
      return true;
    });
    assert.deepEqual(await policies.set(t.company.companyId, { timeZone: "Europe/Paris", quietHours: null }), { timeZone: "Europe/Paris", quietHours: null, dailyCap: 3 });
  });
});
