import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fakeClock } from "../../../adapters/clock/index.ts";
import { memorySms } from "../../../adapters/sms/memory/index.ts";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import { startTestKit, type TestKit } from "../../support/test-kit.ts";
import { eligibilityRows, optIn, PHONE, textFrom, textsTo } from "./support.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";

/** The end-to-end story, from the opt-in job onwards (the opt-in itself is done by the caller). */
async function confirmThenStopThenOptInAgain(t: TestKit): Promise<void> {
  await t.scheduler.flush();
  assert.equal(textsTo(t, PHONE).length, 1);
  assert.match(textsTo(t, PHONE)[0]!, /^Acme: Reply Y to receive recurring automated marketing texts.*Consent is not a condition of purchase/);
  assert.deepEqual(await eligibilityRows(t, `phone=${encodeURIComponent(PHONE)}`), [["MARKETING", "TEXT", false]]);

  await textFrom(t, PHONE, "y ");
  assert.deepEqual(await eligibilityRows(t, `phone=${encodeURIComponent(PHONE)}`), [["MARKETING", "TEXT", true]]);
  assert.match(textsTo(t, PHONE)[1]!, /^Acme: You are subscribed to recurring automated marketing texts/);

  await textFrom(t, PHONE, "STOP");
  assert.deepEqual(await eligibilityRows(t, `phone=${encodeURIComponent(PHONE)}`), [["MARKETING", "TEXT", false]]);
  assert.match(textsTo(t, PHONE)[2]!, /^Acme: You are unsubscribed and will receive no more texts from Acme/);

  const again = await optIn(t, { user: { phone: PHONE } });
  assert.equal(again.status, 202);
  assert.equal(t.json(again).subscriptionResponses[0].subscriptionCreationStatus, "NEWLY_CREATED");
  await t.scheduler.flush();
  assert.match(textsTo(t, PHONE)[3]!, /Reply Y to receive/);
}

describe("subscriptions end to end", () => {
  it("opt in, Reply Y text, not eligible, y, eligible, STOP, not eligible and told so, opt in again: NEWLY_CREATED", async () => {
    const t = await startTestKit();
    const first = await optIn(t, { user: { phone: PHONE } });
    assert.equal(first.status, 202);
    assert.deepEqual(t.json(first).subscriptionResponses, [{ subscription: { type: "MARKETING", channel: "TEXT" }, subscriptionCreationStatus: "NEWLY_CREATED" }]);
    assert.deepEqual(await eligibilityRows(t, `phone=${encodeURIComponent(PHONE)}`), [], "nothing is stored before the job runs");
    await confirmThenStopThenOptInAgain(t);
    await t.stop();
  });

  it("survives a restart of the kit on the same SQLite file between the opt-in and the job run", async () => {
    const filename = join(temporaryDirectory("flow"), "reachkit.db");
    const clock = fakeClock("2026-03-01T12:00:00.000Z");
    const sms = memorySms();
    const before = await startTestKit({ storage: sqliteStorage({ filename }), clock, sms });
    assert.equal((await optIn(before, { user: { phone: PHONE } })).status, 202);
    await before.stop();
    assert.equal(sms.sent.length, 0, "the kit stopped before the job ran");

    const afterRestart = await startTestKit({ storage: sqliteStorage({ filename }), clock, sms, bare: true });
    const t: TestKit = { ...afterRestart, company: before.company, request: (request) => afterRestart.request({ ...request, token: request.token ?? before.company.apiKey }) };
    await confirmThenStopThenOptInAgain(t);
    await t.stop();
  });
});
