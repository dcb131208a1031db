import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { accountsPlugin } from "../../../plugins/accounts/index.ts";
import { DEFAULT_REPEAT_TEXT_WINDOW_MS, subscriptionsPlugin } from "../../../plugins/subscriptions/index.ts";
import { startTestKit, type TestKit } from "../../support/test-kit.ts";
import { optIn, PHONE, textsTo, unsubscribe } from "./support.ts";

const MINUTE = 60_000;

/** The outbox's messages to the phone: kind and status. */
async function outboxTo(t: TestKit, phone: string): Promise<string[]> {
  return (await t.kit.outbox.list({ companyId: t.company.companyId, to: phone })).map((m) => `${m.kind} ${m.status}`);
}

async function actionsOf(t: TestKit, phone: string): Promise<string[]> {
  return (await t.kit.plugin("subscriptions").changes(t.company.companyId, { phone })).map((change) => change.action);
}

describe("repeated opt-ins and unsubscribes: recorded every time, texted once per window", () => {
  it("ten opt-ins of one phone in a burst: ten recorded, one Reply Y text; at the window's end still none, just after it another", async () => {
    const t = await startTestKit({ config: { rateLimits: { "opt-in": 100 } } });
    for (let i = 0; i < 10; i++) assert.equal((await optIn(t, { user: { phone: PHONE } })).status, 202);
    await t.scheduler.flush();
    assert.equal(textsTo(t, PHONE).length, 1);
    assert.match(textsTo(t, PHONE)[0]!, /Reply Y/);
    assert.deepEqual(await actionsOf(t, PHONE), ["opt_in", ...Array<string>(9).fill("opt_in_repeated")]);
    // The nine repeats are recorded by their change records alone: the outbox keeps the one text.
    assert.deepEqual(await outboxTo(t, PHONE), ["confirm_request_marketing sent"]);

    // The window counts from the text: ten minutes after it, an attempt is still only recorded.
    await t.scheduler.advance(DEFAULT_REPEAT_TEXT_WINDOW_MS);
    await optIn(t, { user: { phone: PHONE } });
    await t.scheduler.flush();
    assert.equal(textsTo(t, PHONE).length, 1);
    await t.scheduler.advance(1);
    await optIn(t, { user: { phone: PHONE } });
    await t.scheduler.flush();
    assert.equal(textsTo(t, PHONE).length, 2);
    assert.match(textsTo(t, PHONE)[1]!, /Reply Y/);
    assert.equal((await actionsOf(t, PHONE)).length, 12);
    await t.stop();
  });

  it("counts per company and per kind: another company's Reply Y goes out, and so does the first already-subscribed text", async () => {
    const t = await startTestKit({ config: { rateLimits: { "opt-in": 100 } } });
    const other = await t.kit.provisionCompany({ name: "Other" });
    await optIn(t, { user: { phone: PHONE } });
    await optIn(t, { user: { phone: PHONE } }, other.output.apiKey as string);
    await t.scheduler.flush();
    // Two companies' opt-ins commit in either order where transactions run side by side (PostgreSQL).
    assert.deepEqual(textsTo(t, PHONE).map((text) => text.split(":")[0]).sort(), ["Acme", "Other"]);

    // Confirmed by a single opt-in, then asked twice more: one already-subscribed text.
    await optIn(t, { user: { phone: PHONE }, singleOptIn: true });
    await optIn(t, { user: { phone: PHONE } });
    await optIn(t, { user: { phone: PHONE } });
    await t.scheduler.flush();
    assert.deepEqual(await outboxTo(t, PHONE), ["confirm_request_marketing sent", "welcome_marketing sent", "already_subscribed sent"]);
    assert.deepEqual(await actionsOf(t, PHONE), ["opt_in", "confirmed", "opt_in_repeated", "opt_in_repeated"]);
    await t.stop();
  });

  it("a burst of unsubscribes: the unsubscribed text, one already-unsubscribed text, then another after the window", async () => {
    const t = await startTestKit({ config: { rateLimits: { "opt-in": 100, unsubscribe: 100 } } });
    await optIn(t, { user: { phone: PHONE }, singleOptIn: true });
    await t.scheduler.flush();
    t.sms.clear();
    for (let i = 0; i < 5; i++) await unsubscribe(t, { user: { phone: PHONE } });
    await t.scheduler.flush();
    assert.deepEqual(textsTo(t, PHONE), [
      "Acme: You are unsubscribed and will receive no more texts from Acme. Reply START to subscribe again.",
      "Acme: You are already unsubscribed from texts from Acme. Reply START to subscribe again.",
    ]);
    assert.deepEqual(await actionsOf(t, PHONE), ["opt_in", "unsubscribed", ...Array<string>(4).fill("unsubscribe_repeated")]);
    await t.scheduler.advance(DEFAULT_REPEAT_TEXT_WINDOW_MS + 1);
    await unsubscribe(t, { user: { phone: PHONE } });
    await t.scheduler.flush();
    assert.equal(textsTo(t, PHONE).length, 3);
    await t.stop();
  });

  it("takes the window from subscriptionsPlugin({ repeatTextWindowMs }): 0 answers every attempt, and a bad value is refused", async () => {
    const plugins = (repeatTextWindowMs: number) => [accountsPlugin(), subscriptionsPlugin({ repeatTextWindowMs })];
    const everyTime = await startTestKit({ plugins: plugins(0), config: { rateLimits: { "opt-in": 100 } } });
    for (let i = 0; i < 3; i++) await optIn(everyTime, { user: { phone: PHONE } });
    await everyTime.scheduler.flush();
    assert.equal(textsTo(everyTime, PHONE).length, 3);
    await everyTime.stop();

    const oneMinute = await startTestKit({ plugins: plugins(MINUTE), config: { rateLimits: { "opt-in": 100 } } });
    await optIn(oneMinute, { user: { phone: PHONE } });
    await oneMinute.scheduler.flush();
    await oneMinute.scheduler.advance(MINUTE + 1);
    await optIn(oneMinute, { user: { phone: PHONE } });
    await oneMinute.scheduler.flush();
    assert.equal(textsTo(oneMinute, PHONE).length, 2);
    await oneMinute.stop();

    for (const bad of [-1, 1.5, Number.NaN, Infinity]) {
      assert.throws(() => subscriptionsPlugin({ repeatTextWindowMs: bad }), /repeatTextWindowMs must be a whole number of milliseconds/);
    }
  });

  it("a repeat that brings nothing new leaves the subscriber's row as it was; one with a new name updates it", async () => {
    const t = await startTestKit({ config: { rateLimits: { "opt-in": 100 } } });
    const subscriber = () => t.kit.plugin("subscriptions").findSubscriber(t.company.companyId, { phone: PHONE });
    await optIn(t, { user: { phone: PHONE, firstName: "Ada" }, externalIdentifiers: { clientUserId: "c-1" } });
    await t.scheduler.flush();
    const first = (await subscriber())!;

    await t.scheduler.advance(MINUTE);
    await optIn(t, { user: { phone: PHONE }, externalIdentifiers: { clientUserId: "c-1" } });
    await optIn(t, { user: { phone: PHONE, firstName: "Ada" } });
    await t.scheduler.flush();
    assert.deepEqual(await subscriber(), first);
    assert.deepEqual(await actionsOf(t, PHONE), ["opt_in", "opt_in_repeated", "opt_in_repeated"]);

    await t.scheduler.advance(MINUTE);
    await optIn(t, { user: { phone: PHONE, lastName: "Lovelace" } });
    await t.scheduler.flush();
    assert.deepEqual(await subscriber(), { ...first, lastName: "Lovelace", updatedAt: first.updatedAt + 2 * MINUTE });
    await t.stop();
  });
});
