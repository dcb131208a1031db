import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { addSubscriber, OTHER_PHONE, post, PHONE, startLegacyKit, textsTo } from "./support.ts";

const UNSUBSCRIBED = "Acme: You are unsubscribed and will receive no more texts from Acme. Reply START to subscribe again.";

describe("POST /1/subscribers/unsubscribe", () => {
  it("opts the subscriber out (200), texts them when asked, and keeps the subscriber record", async () => {
    const t = await startLegacyKit();
    const added = await addSubscriber(t, PHONE, { email: "ada@example.com" });
    const response = await post(t, "/1/subscribers/unsubscribe", { phone: "(914) 844-0001", sendOptOutMessage: true });
    assert.equal(response.status, 200);
    assert.deepEqual(t.json(response).subscriptions, [{ type: "MARKETING", channel: "TEXT", state: "unsubscribed" }]);
    assert.equal(t.json(response).optOutMessageSent, true);
    await t.scheduler.flush();
    assert.deepEqual(textsTo(t, PHONE), [UNSUBSCRIBED]);
    const subscriptions = t.kit.plugin("subscriptions");
    assert.equal((await subscriptions.findSubscriber(t.company.companyId, { phone: PHONE }))?.id, added.id, "the subscriber stays");
    assert.deepEqual((await subscriptions.eligibility(t.company.companyId, { phone: PHONE })).map((e) => e.eligibility.isEligible), [false]);
    assert.equal((await subscriptions.subscriptions(t.company.companyId, { phone: PHONE }))[0]?.source, "legacy_api");
    await t.stop();
  });

  it('takes sendOptOutMessage as a boolean or "true"/"false"; false sends no text', async () => {
    const t = await startLegacyKit();
    await addSubscriber(t, PHONE);
    await addSubscriber(t, OTHER_PHONE);
    assert.equal((await post(t, "/1/subscribers/unsubscribe", { phone: PHONE, sendOptOutMessage: "false" })).status, 200);
    assert.equal((await post(t, "/1/subscribers/unsubscribe", { phone: OTHER_PHONE, sendOptOutMessage: "true" })).status, 200);
    await t.scheduler.flush();
    assert.deepEqual(textsTo(t, PHONE), []);
    assert.deepEqual(textsTo(t, OTHER_PHONE), [UNSUBSCRIBED]);
    await t.stop();
  });

  it("answers 409 for a subscriber already opted out, and sends nothing", async () => {
    const t = await startLegacyKit();
    await addSubscriber(t, PHONE);
    assert.equal((await post(t, "/1/subscribers/unsubscribe", { phone: PHONE, sendOptOutMessage: false })).status, 200);
    const again = await post(t, "/1/subscribers/unsubscribe", { phone: PHONE, sendOptOutMessage: true });
    assert.equal(again.status, 409);
    assert.equal(t.json(again).error.code, "conflict");
    await t.scheduler.flush();
    assert.equal(t.sms.sent.length, 0);
    await t.stop();
  });

  it("answers 400 for no such subscriber (another company's included) and for malformed input", async () => {
    const t = await startLegacyKit();
    await addSubscriber(t, PHONE);
    const other = await t.kit.provisionCompany({ name: "Other" });
    const unknown = await post(t, "/1/subscribers/unsubscribe", { phone: OTHER_PHONE, sendOptOutMessage: true });
    assert.equal(unknown.status, 400);
    assert.equal(t.json(unknown).error.code, "no_subscriber");
    assert.equal((await post(t, "/1/subscribers/unsubscribe", { phone: PHONE, sendOptOutMessage: true }, other.output.legacyToken as string)).status, 400);
    const cases: Array<[unknown, string]> = [
      [{ phone: PHONE }, "sendOptOutMessage"],
      [{ phone: PHONE, sendOptOutMessage: "yes" }, "sendOptOutMessage"],
      [{ phone: PHONE, sendOptOutMessage: 1 }, "sendOptOutMessage"],
      [{ sendOptOutMessage: true }, "phone"],
      [{ phone: "not a phone", sendOptOutMessage: true }, "phone"],
    ];
    for (const [body, path] of cases) {
      const response = await post(t, "/1/subscribers/unsubscribe", body);
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(t.json(response).error.details[0].path, path, response.body);
    }
    assert.deepEqual((await t.kit.plugin("subscriptions").eligibility(t.company.companyId, { phone: PHONE })).map((e) => e.eligibility.isEligible), [true]);
    await t.scheduler.flush();
    assert.equal(t.sms.sent.length, 0);
    await t.stop();
  });

  it("answers 401 without a valid legacy token", async () => {
    const t = await startLegacyKit();
    await addSubscriber(t, PHONE);
    for (const token of [t.company.apiKey, "nope", null]) {
      assert.equal((await post(t, "/1/subscribers/unsubscribe", { phone: PHONE, sendOptOutMessage: true }, token)).status, 401);
    }
    await t.stop();
  });
});
