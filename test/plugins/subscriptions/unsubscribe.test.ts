import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { InjectResponse } from "../../../src/index.ts";
import { startTestKit, type Json, type TestKit } from "../../support/test-kit.ts";
import { EMAIL, eligibilityRows, optIn, PHONE, textsTo, unsubscribe } from "./support.ts";

const BOTH = `phone=%2B19148440001&email=${encodeURIComponent(EMAIL)}`;

/** Active MARKETING and TRANSACTIONAL subscriptions on both channels. */
async function subscribedKit(): Promise<TestKit> {
  const t = await startTestKit({ config: { rateLimits: { "opt-in": 100, unsubscribe: 100 } } });
  await optIn(t, { user: { phone: PHONE, email: EMAIL }, singleOptIn: true });
  await optIn(t, { user: { phone: PHONE, email: EMAIL }, singleOptIn: true, subscriptionType: "TRANSACTIONAL" });
  await t.scheduler.flush();
  t.sms.clear();
  return t;
}

const statuses = (t: TestKit, response: InjectResponse) =>
  t.json(response).subscriptionResponses.map((r: Json) => [r.subscription.type, r.subscription.channel, r.subscriptionUnsubscribeStatus]);

describe("POST /v1/subscriptions/unsubscribe", () => {
  it("with no list unsubscribes all of the phone's TEXT subscriptions only, and confirms by text", async () => {
    const t = await subscribedKit();
    const response = await unsubscribe(t, { user: { phone: PHONE } });
    assert.equal(response.status, 202);
    assert.deepEqual(t.json(response).user, { phone: PHONE });
    assert.deepEqual(statuses(t, response), [
      ["MARKETING", "TEXT", "NEWLY_UNSUBSCRIBED"],
      ["TRANSACTIONAL", "TEXT", "NEWLY_UNSUBSCRIBED"],
    ]);
    assert.deepEqual(await eligibilityRows(t, BOTH), [
      ["MARKETING", "TEXT", true],
      ["TRANSACTIONAL", "TEXT", true],
      ["MARKETING", "EMAIL", true],
      ["TRANSACTIONAL", "EMAIL", true],
    ], "the job has not run yet");
    await t.scheduler.flush();
    assert.deepEqual(await eligibilityRows(t, BOTH), [
      ["MARKETING", "TEXT", false],
      ["TRANSACTIONAL", "TEXT", false],
      ["MARKETING", "EMAIL", true],
      ["TRANSACTIONAL", "EMAIL", true],
    ]);
    assert.deepEqual(textsTo(t, PHONE), ["Acme: You are unsubscribed and will receive no more texts from Acme. Reply START to subscribe again."]);
    await t.stop();
  });

  it("with an empty list and an email unsubscribes the EMAIL subscriptions only, and sends no text", async () => {
    const t = await subscribedKit();
    const response = await unsubscribe(t, { user: { email: EMAIL }, subscriptions: [] });
    assert.deepEqual(statuses(t, response), [
      ["MARKETING", "EMAIL", "NEWLY_UNSUBSCRIBED"],
      ["TRANSACTIONAL", "EMAIL", "NEWLY_UNSUBSCRIBED"],
    ]);
    await t.scheduler.flush();
    assert.deepEqual(await eligibilityRows(t, BOTH), [
      ["MARKETING", "TEXT", true],
      ["TRANSACTIONAL", "TEXT", true],
      ["MARKETING", "EMAIL", false],
      ["TRANSACTIONAL", "EMAIL", false],
    ]);
    assert.equal(t.sms.sent.length, 0);
    await t.stop();
  });

  it("unsubscribes only the listed combinations, on the user's channels only", async () => {
    const t = await subscribedKit();
    const response = await unsubscribe(t, {
      user: { phone: PHONE },
      subscriptions: [
        { type: "MARKETING", channel: "TEXT" },
        { type: "MARKETING", channel: "EMAIL" },
        { type: "MARKETING", channel: "TEXT" },
      ],
    });
    assert.deepEqual(statuses(t, response), [["MARKETING", "TEXT", "NEWLY_UNSUBSCRIBED"]]);
    await t.scheduler.flush();
    assert.deepEqual(await eligibilityRows(t, BOTH), [
      ["MARKETING", "TEXT", false],
      ["TRANSACTIONAL", "TEXT", true],
      ["MARKETING", "EMAIL", true],
      ["TRANSACTIONAL", "EMAIL", true],
    ]);
    await t.stop();
  });

  it("suppresses the text when notification.disabled, and writes it in the notification language", async () => {
    const t = await subscribedKit();
    await unsubscribe(t, { user: { phone: PHONE }, subscriptions: [{ type: "MARKETING", channel: "TEXT" }], notification: { disabled: true } });
    await t.scheduler.flush();
    assert.equal(t.sms.sent.length, 0);
    await unsubscribe(t, { user: { phone: PHONE }, notification: { language: "fr-CA" } });
    await t.scheduler.flush();
    assert.deepEqual(textsTo(t, PHONE), ["Acme : Vous êtes désabonné et ne recevrez plus de textos de Acme. Répondez START pour vous abonner de nouveau."]);
    await t.stop();
  });

  it("records an unsubscribe of an unsubscribed user: PREVIOUSLY_UNSUBSCRIBED, and the text says so", async () => {
    const t = await subscribedKit();
    await unsubscribe(t, { user: { phone: PHONE }, subscriptions: [{ type: "MARKETING", channel: "TEXT" }] });
    await t.scheduler.flush();
    const again = await unsubscribe(t, { user: { phone: PHONE }, subscriptions: [{ type: "MARKETING", channel: "TEXT" }] });
    assert.deepEqual(statuses(t, again), [["MARKETING", "TEXT", "PREVIOUSLY_UNSUBSCRIBED"]]);
    await t.scheduler.flush();
    assert.match(textsTo(t, PHONE)[1]!, /^Acme: You are already unsubscribed from texts from Acme/);
    const changes = await t.kit.plugin("subscriptions").changes(t.company.companyId, { phone: PHONE });
    assert.deepEqual(
      changes.filter((c) => c.type === "MARKETING").map((c) => c.action),
      ["opt_in", "unsubscribed", "unsubscribe_repeated"],
    );
    await t.stop();
  });

  it("answers PREVIOUSLY_UNSUBSCRIBED for someone never subscribed, and sends them nothing", async () => {
    const t = await startTestKit();
    const response = await unsubscribe(t, { user: { phone: "+15555550111" }, subscriptions: [{ type: "MARKETING", channel: "TEXT" }] });
    assert.deepEqual(statuses(t, response), [["MARKETING", "TEXT", "PREVIOUSLY_UNSUBSCRIBED"]]);
    assert.deepEqual(t.json(await unsubscribe(t, { user: { phone: "+15555550112" } })).subscriptionResponses, []);
    await t.scheduler.flush();
    assert.equal(t.sms.sent.length, 0);
    await t.stop();
  });

  it("answers 400 naming the field for a list item without channel, a 100 KB email or no user, and queues nothing", async () => {
    const t = await subscribedKit();
    for (const [body, path] of [
      [{ user: { phone: PHONE }, subscriptions: [{ type: "MARKETING" }] }, "subscriptions.0.channel"],
      [{ user: { phone: PHONE }, subscriptions: [{ type: "OTHER", channel: "TEXT" }] }, "subscriptions.0.type"],
      [{ user: { phone: PHONE }, subscriptions: { type: "MARKETING" } }, "subscriptions"],
      [{ user: { email: `${"b".repeat(100_000)}@example.com` } }, "user.email"],
      [{ user: { phone: "+1 914 844 0001" } }, "user.phone"],
      [{ user: {} }, "user"],
      [{ user: { phone: PHONE }, notification: { disabled: "yes" } }, "notification.disabled"],
    ] as const) {
      const response = await unsubscribe(t, body);
      assert.equal(response.status, 400, JSON.stringify(body).slice(0, 100));
      assert.ok(t.json(response).error.details.some((d: Json) => d.path === path), response.body.slice(0, 300));
    }
    assert.deepEqual(await t.kit.jobs.list({ type: "subscriptions.unsubscribe" }), []);
    await t.stop();
  });
});

describe("DELETE /v1/subscriptions?phone=|email=", () => {
  it("opts the phone out of every text subscription", async () => {
    const t = await subscribedKit();
    const response = await t.request({ method: "DELETE", url: "/v1/subscriptions?phone=%2B19148440001" });
    assert.equal(response.status, 202);
    assert.deepEqual(statuses(t, response), [
      ["MARKETING", "TEXT", "NEWLY_UNSUBSCRIBED"],
      ["TRANSACTIONAL", "TEXT", "NEWLY_UNSUBSCRIBED"],
    ]);
    await t.scheduler.flush();
    assert.deepEqual((await eligibilityRows(t, BOTH)).map((row) => row[2]), [false, false, true, true]);
    assert.equal((await t.request({ method: "DELETE", url: "/v1/subscriptions" })).status, 400);
    await t.stop();
  });

  it("opts an email out of every email subscription, and both with both, texts untouched by an email", async () => {
    const t = await subscribedKit();
    const byEmail = await t.request({ method: "DELETE", url: `/v1/subscriptions?email=${encodeURIComponent(EMAIL)}` });
    assert.equal(byEmail.status, 202, byEmail.body);
    assert.deepEqual(statuses(t, byEmail), [
      ["MARKETING", "EMAIL", "NEWLY_UNSUBSCRIBED"],
      ["TRANSACTIONAL", "EMAIL", "NEWLY_UNSUBSCRIBED"],
    ]);
    await t.scheduler.flush();
    assert.deepEqual((await eligibilityRows(t, BOTH)).map((row) => row[2]), [true, true, false, false]);
    const byBoth = await t.request({ method: "DELETE", url: `/v1/subscriptions?${BOTH}` });
    assert.deepEqual(statuses(t, byBoth).map((row: string[]) => row[2]), ["NEWLY_UNSUBSCRIBED", "NEWLY_UNSUBSCRIBED", "PREVIOUSLY_UNSUBSCRIBED", "PREVIOUSLY_UNSUBSCRIBED"]);
    await t.scheduler.flush();
    assert.deepEqual((await eligibilityRows(t, BOTH)).map((row) => row[2]), [false, false, false, false]);
    assert.equal((await t.request({ method: "DELETE", url: "/v1/subscriptions?email=not-an-email" })).status, 400);
    await t.stop();
  });
});
