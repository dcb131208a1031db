import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { startLegacyKit, post, PHONE, textsTo } from "./support.ts";

const WELCOME = /^Acme: You are subscribed to recurring automated marketing texts from Acme\. Consent is not a condition of purchase\./;

describe("POST /1/add-subscribers", () => {
  it("creates a subscriber (201) from the phone formats real callers send, and texts the welcome with the legal disclosure", async () => {
    const t = await startLegacyKit();
    const created = await post(t, "/1/add-subscribers", { phone: "914-844-0001" });
    assert.equal(created.status, 201);
    const body = t.json(created);
    assert.equal(body.phone, PHONE);
    assert.equal(body.created, true);
    assert.deepEqual(body.subscriptions, [{ type: "MARKETING", channel: "TEXT", state: "active" }]);
    await t.scheduler.flush();
    assert.equal(textsTo(t, PHONE).length, 1);
    assert.match(textsTo(t, PHONE)[0]!, WELCOME);
    const [subscription] = await t.kit.plugin("subscriptions").subscriptions(t.company.companyId, { phone: PHONE });
    assert.equal(subscription?.source, "legacy_api");

    for (const phone of ["(914) 844-0001", "+19148440001", "1 914 844 0001"]) {
      const again = await post(t, "/1/add-subscribers", { phone });
      assert.equal(again.status, 200, phone);
      assert.equal(t.json(again).id, body.id);
      assert.equal(t.json(again).created, false);
    }
    await t.stop();
  });

  it("normalises 555-555-5555, (555) 555-5555 and +15555555555 to the same E.164 subscriber", async () => {
    const t = await startLegacyKit();
    const statuses = [];
    for (const phone of ["555-555-5555", "(555) 555-5555", "+15555555555"]) {
      const response = await post(t, "/1/add-subscribers", { phone });
      statuses.push([response.status, t.json(response).phone]);
    }
    assert.deepEqual(statuses, [
      [201, "+15555555555"],
      [200, "+15555555555"],
      [200, "+15555555555"],
    ]);
    await t.stop();
  });

  it("answers 200 for an existing subscriber: already subscribed is told so, an opted-out one is subscribed again with the welcome", async () => {
    const t = await startLegacyKit();
    await post(t, "/1/add-subscribers", { phone: PHONE });
    await t.scheduler.flush();
    t.sms.clear();
    assert.equal((await post(t, "/1/add-subscribers", { phone: PHONE })).status, 200);
    await t.scheduler.flush();
    assert.deepEqual(textsTo(t, PHONE), ["Acme: You are already subscribed to texts from Acme. Reply HELP for help, STOP to cancel."]);

    assert.equal((await post(t, "/1/subscribers/unsubscribe", { phone: PHONE, sendOptOutMessage: false })).status, 200);
    t.sms.clear();
    const back = await post(t, "/1/add-subscribers", { phone: PHONE });
    assert.equal(back.status, 200);
    assert.deepEqual(t.json(back).subscriptions, [{ type: "MARKETING", channel: "TEXT", state: "active" }]);
    await t.scheduler.flush();
    assert.match(textsTo(t, PHONE)[0]!, WELCOME);
    await t.stop();
  });

  it("keeps email and names from the top level or from metadata (an object or its JSON text) on the subscriber, without an email subscription", async () => {
    const t = await startLegacyKit();
    const fromMetadata = await post(t, "/1/add-subscribers", {
      phone: PHONE,
      visitorId: "v-1",
      metadata: { email: "Ada@Example.com", first_name: "Ada", creativeId: 42, coupon: { code: "X1" } },
    });
    assert.equal(fromMetadata.status, 201);
    assert.deepEqual(
      (({ email, firstName, visitorId, creativeId }) => ({ email, firstName, visitorId, creativeId }))(t.json(fromMetadata)),
      { email: "ada@example.com", firstName: "Ada", visitorId: "v-1", creativeId: "42" },
    );
    const subscriptions = t.kit.plugin("subscriptions");
    assert.deepEqual(
      (await subscriptions.eligibility(t.company.companyId, { phone: PHONE, email: "ada@example.com" })).map((e) => e.subscription.channel),
      ["TEXT"],
      "the email is attached, not subscribed",
    );
    assert.equal((await subscriptions.findSubscriber(t.company.companyId, { email: "ada@example.com" }))?.phone, PHONE);

    const topLevel = await post(t, "/1/add-subscribers", {
      phone: "+19148440002",
      email: "bob@example.com",
      first_name: "Bob",
      lastName: "Stone",
      creativeId: "c-7",
      metadata: JSON.stringify({ email: "ignored@example.com", first_name: "Ignored" }),
    });
    assert.equal(topLevel.status, 201);
    assert.deepEqual(
      (({ email, firstName, lastName, creativeId }) => ({ email, firstName, lastName, creativeId }))(t.json(topLevel)),
      { email: "bob@example.com", firstName: "Bob", lastName: "Stone", creativeId: "c-7" },
      "top-level values win over metadata",
    );
    const [signUp] = await t.kit.plugin("legacy").signUps(t.company.companyId, PHONE);
    assert.deepEqual(
      (({ visitorId, creativeId, metadata, created }) => ({ visitorId, creativeId, metadata, created }))(signUp!),
      { visitorId: "v-1", creativeId: "42", metadata: { email: "ada@example.com", first_name: "Ada", creativeId: "42", coupon: { code: "X1" } }, created: true },
    );
    await t.stop();
  });

  it("answers 400 naming the field for what cannot be read, and stores and sends nothing", async () => {
    const t = await startLegacyKit();
    const cases: Array<[unknown, string]> = [
      [{}, "phone"],
      [{ phone: "abc" }, "phone"],
      [{ phone: "123" }, "phone"],
      [{ phone: "" }, "phone"],
      [{ phone: 9148440001 }, "phone"],
      [{ phone: PHONE, email: "not-an-email" }, "email"],
      [{ phone: PHONE, metadata: [] }, "metadata"],
      [{ phone: PHONE, metadata: "not json" }, "metadata"],
      [{ phone: PHONE, metadata: { email: 5 } }, "metadata.email"],
      [{ phone: PHONE, metadata: { blob: "x".repeat(10_001) } }, "metadata"],
      [{ phone: PHONE, visitorId: 1 }, "visitorId"],
      [[{ phone: PHONE }], "body"],
    ];
    for (const [body, path] of cases) {
      const response = await post(t, "/1/add-subscribers", body);
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.ok(t.json(response).error.details.some((detail: { path: string }) => detail.path === path), `${JSON.stringify(body)}: ${response.body}`);
    }
    await t.scheduler.flush();
    assert.equal(t.sms.sent.length, 0);
    assert.equal(await t.kit.plugin("subscriptions").findSubscriber(t.company.companyId, { phone: PHONE }), undefined);
    assert.deepEqual(await t.kit.outbox.list(), []);
    await t.stop();
  });

  it("needs the legacy token (401 otherwise) and works within the token's company only", async () => {
    const t = await startLegacyKit();
    assert.equal((await post(t, "/1/add-subscribers", { phone: PHONE }, t.company.apiKey)).status, 401);
    assert.equal((await post(t, "/1/add-subscribers", { phone: PHONE }, "rk_leg_not-a-token")).status, 401);
    assert.equal((await post(t, "/1/add-subscribers", { phone: PHONE }, null)).status, 401);
    const other = await t.kit.provisionCompany({ name: "Other" });
    assert.equal((await post(t, "/1/add-subscribers", { phone: PHONE }, other.output.legacyToken as string)).status, 201);
    assert.equal((await post(t, "/1/add-subscribers", { phone: PHONE })).status, 201, "a new subscriber for Acme too");
    await t.scheduler.flush();
    assert.deepEqual(
      textsTo(t, PHONE).map((text) => text.split(":")[0]),
      ["Other", "Acme"],
    );
    await t.stop();
  });

  it("answers 400 when the company has no MARKETING sign-up unit to record the opt-in under", async () => {
    const t = await startLegacyKit({ bare: true });
    const company = await t.kit.plugin("accounts").createCompany({ name: "Unprovisioned" });
    const { token } = await t.kit.plugin("accounts").issueCredential({ companyId: company.id, kind: "legacy" });
    const response = await post(t, "/1/add-subscribers", { phone: PHONE }, token);
    assert.equal(response.status, 400);
    assert.equal(t.json(response).error.code, "no_sign_up_unit");
    await t.stop();
  });
});
