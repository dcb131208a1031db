import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { memorySms } from "../../../adapters/sms/memory/index.ts";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import { accountsPlugin } from "../../../plugins/accounts/index.ts";
import { SenderNumberTakenError } from "../../../plugins/subscriptions/index.ts";
import type { InboundWebhookRequest } from "../../../src/index.ts";
import { startTestKit, type TestKit } from "../../support/test-kit.ts";
import { eligibilityRows, optIn, PHONE, textFrom, textsTo } from "./support.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";

async function senderOf(t: TestKit, companyId = t.company.companyId): Promise<string> {
  return (await t.kit.plugin("accounts").getCompany(companyId))!.senderNumber!;
}

function webhook(t: TestKit, path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return t.request({
    method: "POST",
    url: path,
    token: null,
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

/** A pending MARKETING text subscription of PHONE at Acme. */
async function pendingKit(options: Parameters<typeof startTestKit>[0] = {}): Promise<TestKit & { path: string }> {
  const t = await startTestKit({ config: { rateLimits: { "opt-in": 100 } }, ...options });
  await optIn(t, { user: { phone: PHONE } });
  await t.scheduler.flush();
  return Object.assign(t, { path: t.kit.plugin("subscriptions").senderNumbers.webhookPath(t.company.companyId) });
}

describe("POST /sms/inbound (the provider webhook)", () => {
  it("takes the provider's form on the company's secret path and confirms a pending subscription", async () => {
    const t = await pendingKit();
    const response = await webhook(t, t.path, { From: PHONE, To: await senderOf(t), Body: "  yes ", MessageSid: "SM1", AccountSid: "AC1" });
    assert.equal(response.status, 200, response.body);
    assert.deepEqual(t.json(response), { received: true, keyword: "confirm", changed: 1 });
    assert.deepEqual(await eligibilityRows(t, "phone=%2B19148440001"), [["MARKETING", "TEXT", true]]);
    await t.stop();
  });

  it("answers 401 without the token, with a wrong one, or with another company's, and changes nothing", async () => {
    const t = await pendingKit();
    const other = await t.kit.provisionCompany({ name: "Other" });
    const fields = { From: PHONE, To: await senderOf(t), Body: "Y" };
    for (const path of ["/sms/inbound", `${t.path}x`, "/sms/inbound/not-the-token", other.output.inboundWebhookPath as string]) {
      const response = await webhook(t, path, fields);
      assert.equal(response.status, 401, path);
      assert.equal(t.json(response).error.code, "unauthorized");
    }
    assert.equal((await webhook(t, t.path, { ...fields, To: "+15550001111" })).status, 401, "no company has that number");
    assert.deepEqual(await eligibilityRows(t, "phone=%2B19148440001"), [["MARKETING", "TEXT", false]]);
    await t.stop();
  });

  it("trusts a request the SMS adapter's signature check accepts, without the token", async () => {
    const sms = memorySms();
    const seen: InboundWebhookRequest[] = [];
    const signing = Object.assign(sms, {
      verifyInbound(request: InboundWebhookRequest) {
        seen.push(request);
        return request.headers["x-signature"] === "good";
      },
    });
    const t = await pendingKit({ sms: signing });
    const fields = { From: PHONE, To: await senderOf(t), Body: "Y" };
    // The adapter checks signatures: one that does not match is refused (403), not merely missing credentials.
    assert.equal((await webhook(t, "/sms/inbound", fields, { "x-signature": "bad" })).status, 403);
    assert.equal((await webhook(t, "/sms/inbound", { ...fields, To: "+15550001111" }, { "x-signature": "good" })).status, 404);
    assert.equal((await webhook(t, "/sms/inbound", fields, { "x-signature": "good" })).status, 200);
    assert.equal(seen[0]!.url, "http://localhost:3000/sms/inbound");
    assert.deepEqual(seen[0]!.params, fields);
    assert.deepEqual(await eligibilityRows(t, "phone=%2B19148440001"), [["MARKETING", "TEXT", true]]);
    await t.stop();
  });

  it("answers 400 naming a missing From or To, and 415 for JSON", async () => {
    const t = await pendingKit();
    const missing = await webhook(t, t.path, { To: await senderOf(t), Body: "Y" });
    assert.equal(missing.status, 400);
    assert.deepEqual(t.json(missing).error.details, [{ path: "From", message: "is required" }]);
    const garbage = await webhook(t, t.path, { From: "hello", To: await senderOf(t), Body: "HELP" });
    assert.equal(garbage.status, 400);
    assert.deepEqual(t.json(garbage).error.details, [{ path: "From", message: "must be a phone number" }]);
    const json = await t.request({ method: "POST", url: t.path, token: null, body: { From: PHONE } });
    assert.equal(json.status, 415);
    await t.stop();
  });

  it("answers an empty To as missing (400), and a To that is no number as unknown (401), never a 500 (found by fuzzing)", async () => {
    const t = await pendingKit();
    const empty = await webhook(t, t.path, { From: PHONE, To: "", Body: "STOP" });
    assert.equal(empty.status, 400, empty.body);
    assert.deepEqual(t.json(empty).error.details, [{ path: "To", message: "is required" }]);
    for (const to of [" ", "()-", "not a number"]) assert.equal((await webhook(t, t.path, { From: PHONE, To: to, Body: "STOP" })).status, 401, to);
    assert.deepEqual(await eligibilityRows(t, "phone=%2B19148440001"), [["MARKETING", "TEXT", false]]);
    await t.stop();
  });

  it("sends one reply when the provider retries the same message", async () => {
    const t = await pendingKit();
    const fields = { From: PHONE, To: await senderOf(t), Body: "STOP", MessageSid: "SM-retry" };
    assert.equal((await webhook(t, t.path, fields)).status, 200);
    assert.equal((await webhook(t, t.path, fields)).status, 200);
    await t.scheduler.flush();
    assert.equal(textsTo(t, PHONE).filter((text) => /unsubscribed/.test(text)).length, 1);
    await t.stop();
  });
});

describe("inbound keywords", () => {
  it("STOP and each synonym unsubscribes every TEXT subscription, in any case, and confirms by text", async () => {
    for (const word of ["STOP", "stopall", " Unsubscribe ", "cancel", "End", "QUIT\n", "arrêt"]) {
      const t = await pendingKit();
      await optIn(t, { user: { phone: PHONE }, subscriptionType: "TRANSACTIONAL", singleOptIn: true });
      await t.scheduler.flush();
      await textFrom(t, PHONE, word);
      assert.deepEqual(await eligibilityRows(t, "phone=%2B19148440001"), [
        ["MARKETING", "TEXT", false],
        ["TRANSACTIONAL", "TEXT", false],
      ], word);
      assert.match(textsTo(t, PHONE).at(-1)!, /You are unsubscribed/, word);
      const states = (await t.kit.plugin("subscriptions").subscriptions(t.company.companyId, { phone: PHONE })).map((s) => [s.state, s.source]);
      assert.deepEqual(states, [
        ["unsubscribed", "sms_keyword"],
        ["unsubscribed", "sms_keyword"],
      ]);
      await t.stop();
    }
  });

  it("HELP and INFO answer with the help text; other words change nothing and get no answer", async () => {
    const t = await pendingKit();
    await t.kit.plugin("accounts").updateCompany(t.company.companyId, { contactEmail: "care@acme.test" });
    await textFrom(t, PHONE, "help");
    await textFrom(t, "+15555550177", " INFO ");
    assert.deepEqual(textsTo(t, PHONE).slice(1), ["Acme: For help, contact care@acme.test. Msg & data rates may apply. Reply STOP to cancel."]);
    assert.equal(textsTo(t, "+15555550177").length, 1, "anyone texting HELP gets the help text");
    await textFrom(t, PHONE, "yes please");
    await textFrom(t, PHONE, "N");
    assert.equal(textsTo(t, PHONE).length, 2);
    assert.deepEqual(await eligibilityRows(t, "phone=%2B19148440001"), [["MARKETING", "TEXT", false]]);
    await t.stop();
  });

  it("START re-subscribes an unsubscribed number and says so; it does nothing for a stranger", async () => {
    const t = await pendingKit();
    await textFrom(t, PHONE, "Y");
    await textFrom(t, PHONE, "STOP");
    await textFrom(t, PHONE, "start");
    assert.deepEqual(await eligibilityRows(t, "phone=%2B19148440001"), [["MARKETING", "TEXT", true]]);
    assert.match(textsTo(t, PHONE).at(-1)!, /^Acme: You are subscribed again/);
    await textFrom(t, "+15555550178", "START");
    await textFrom(t, "+15555550178", "STOP");
    assert.equal(textsTo(t, "+15555550178").length, 0);
    const actions = (await t.kit.plugin("subscriptions").changes(t.company.companyId, { phone: PHONE })).map((c) => [c.action, c.keyword ?? null]);
    assert.deepEqual(actions, [
      ["opt_in", null],
      ["confirmed", "Y"],
      ["unsubscribed", "STOP"],
      ["resubscribed", "start"],
    ]);
    await t.stop();
  });

  it("routes by the To number: a STOP to one company leaves the same phone's subscription at another", async () => {
    const t = await pendingKit();
    const other = await t.kit.provisionCompany({ name: "Other" });
    const otherKey = other.output.apiKey as string;
    assert.equal((await optIn(t, { user: { phone: PHONE }, singleOptIn: true }, otherKey)).status, 202);
    await t.scheduler.flush();
    await t.sms.deliverInbound({ from: PHONE, to: other.output.senderNumber as string, body: "STOP" });
    await t.scheduler.flush();
    const rows = async (token?: string) => t.json(await t.request({ url: "/v1/subscriptions?phone=%2B19148440001", token })).subscriptionEligibilities;
    assert.equal((await rows(otherKey))[0].eligibility.isEligible, false);
    await textFrom(t, PHONE, "Y");
    assert.equal((await rows())[0].eligibility.isEligible, true);
    assert.match(textsTo(t, PHONE).filter((text) => text.startsWith("Other:")).at(-1)!, /^Other: You are unsubscribed/);
    await t.stop();
  });
});

describe("sender numbers", () => {
  it("gives each company its own number and refuses one that another company has", async () => {
    const t = await startTestKit();
    const other = await t.kit.provisionCompany({ name: "Other" });
    const numbers = t.kit.plugin("subscriptions").senderNumbers;
    assert.notEqual(other.output.senderNumber, await senderOf(t));
    await assert.rejects(numbers.set(other.company.id, await senderOf(t)), SenderNumberTakenError);
    await assert.rejects(numbers.set(other.company.id, "not a number"), RangeError);
    assert.equal(await numbers.set(other.company.id, "1 (555) 123-4567"), "+15551234567");
    assert.equal((await t.kit.plugin("accounts").getCompany(other.company.id))?.senderNumber, "+15551234567");
    assert.equal(await numbers.companyOf("15551234567"), other.company.id);
    assert.equal(await numbers.set(t.company.companyId, "12345"), "12345", "a short code");
    assert.equal(await numbers.companyOf("+15551234567"), other.company.id);
    await t.stop();
  });
});

describe("upgrading a database made before sender numbers", () => {
  it("gives every company without a sender number one, once", async () => {
    const filename = join(temporaryDirectory("upgrade"), "reachkit.db");
    const before = await startTestKit({ storage: sqliteStorage({ filename }), plugins: [accountsPlugin()], bare: true });
    const old = await before.kit.plugin("accounts").createCompany({ name: "Old" });
    await before.stop();
    const after = await startTestKit({ storage: sqliteStorage({ filename }), bare: true });
    const number = (await after.kit.plugin("accounts").getCompany(old.id))?.senderNumber;
    assert.match(number ?? "", /^\+1555\d{7}$/);
    assert.equal(await after.kit.plugin("subscriptions").senderNumbers.companyOf(number!), old.id);
    await after.stop();
  });
});
