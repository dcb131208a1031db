import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { startTestKit, type TestKit } from "../../support/test-kit.ts";
import { EMAIL, eligibilityRows, optIn, PHONE } from "./support.ts";

/** Acme with a confirmed MARKETING text, a pending TRANSACTIONAL text and an active MARKETING email. */
async function subscribedKit(): Promise<TestKit> {
  const t = await startTestKit({ config: { rateLimits: { "opt-in": 100 } } });
  await optIn(t, { user: { phone: PHONE, email: EMAIL }, singleOptIn: true });
  await optIn(t, { user: { phone: PHONE }, subscriptionType: "TRANSACTIONAL" });
  await t.scheduler.flush();
  return t;
}

describe("GET /v1/subscriptions", () => {
  it("lists every type × channel the user has; eligible only when active", async () => {
    const t = await subscribedKit();
    const response = await t.request({ url: `/v1/subscriptions?phone=%2B19148440001&email=${encodeURIComponent(EMAIL)}` });
    assert.equal(response.status, 200);
    assert.equal(response.headers["content-type"], "application/json");
    assert.deepEqual(t.json(response), {
      subscriptionEligibilities: [
        { subscription: { type: "MARKETING", channel: "TEXT" }, eligibility: { isEligible: true } },
        { subscription: { type: "TRANSACTIONAL", channel: "TEXT" }, eligibility: { isEligible: false } },
        { subscription: { type: "MARKETING", channel: "EMAIL" }, eligibility: { isEligible: true } },
      ],
    });
    await t.stop();
  });

  it("tolerates %2B, a + decoded to a space, and email=undefined; an unknown user has an empty list", async () => {
    const t = await subscribedKit();
    const text = [
      ["MARKETING", "TEXT", true],
      ["TRANSACTIONAL", "TEXT", false],
    ];
    assert.deepEqual(await eligibilityRows(t, "phone=%2B19148440001"), text);
    assert.deepEqual(await eligibilityRows(t, "phone=+19148440001"), text);
    assert.deepEqual(await eligibilityRows(t, "phone=%2019148440001&email=undefined"), text);
    assert.deepEqual(await eligibilityRows(t, `email=${encodeURIComponent("ADA@example.com")}`), [["MARKETING", "EMAIL", true]]);
    assert.deepEqual(await eligibilityRows(t, "phone=%2B15555550199"), []);
    await t.stop();
  });

  it("answers 400 without phone or email, or with a malformed one, naming it", async () => {
    const t = await startTestKit();
    for (const [query, path] of [
      ["", "phone"],
      ["?email=undefined", "phone"],
      ["?phone=", "phone"],
      ["?phone=19148440001", "phone"],
      ["?phone=%2B1-914-844-0001", "phone"],
      ["?email=nope", "email"],
      ["?phone=%2B19148440001&email=nope", "email"],
      ["?phone=%2B19148440001&phone=%2B19148440002", "phone"],
    ] as const) {
      const response = await t.request({ url: `/v1/subscriptions${query}` });
      assert.equal(response.status, 400, query);
      assert.ok(t.json(response).error.details.some((d: { path: string }) => d.path === path), `${query}: ${response.body}`);
    }
    await t.stop();
  });

  it("accepts subscriptions:read or subscriptions:write, refuses a token with neither, and a legacy token", async () => {
    const t = await startTestKit();
    const accounts = t.kit.plugin("accounts");
    const tokenWith = async (scopes: Parameters<typeof accounts.createApplication>[0]["scopes"]) => {
      const app = await accounts.createApplication({ companyId: t.company.companyId, name: scopes.join(" ") || "none", scopes });
      return (await accounts.issueCredential({ companyId: t.company.companyId, kind: "api_key", applicationId: app.id })).token;
    };
    const get = async (token: string) => (await t.request({ url: "/v1/subscriptions?phone=%2B19148440001", token })).status;
    assert.equal(await get(await tokenWith(["subscriptions:read"])), 200);
    assert.equal(await get(await tokenWith(["subscriptions:write"])), 200);
    assert.equal(await get(await tokenWith(["privacy_requests:read"])), 403);
    assert.equal(await get(t.company.legacyToken), 401);
    await t.stop();
  });

  it("never shows another company's subscriptions", async () => {
    const t = await subscribedKit();
    const other = await t.kit.provisionCompany({ name: "Other" });
    const response = await t.request({ url: "/v1/subscriptions?phone=%2B19148440001", token: other.output.apiKey as string });
    assert.deepEqual(t.json(response), { subscriptionEligibilities: [] });
    await t.stop();
  });
});

describe("eligibility in process", () => {
  it("gives the ineligibility reason of each state, and NOT_SUBSCRIBED for a type the user lacks", async () => {
    const t = await subscribedKit();
    const service = t.kit.plugin("subscriptions");
    const companyId = t.company.companyId;
    assert.deepEqual(await service.isEligible(companyId, { phone: PHONE }, { type: "MARKETING", channel: "TEXT" }), { isEligible: true });
    assert.deepEqual(await service.isEligible(companyId, { phone: PHONE }, { type: "TRANSACTIONAL", channel: "TEXT" }), {
      isEligible: false,
      ineligibilityReason: "NOT_FULLY_OPTED_IN",
    });
    assert.deepEqual(await service.isEligible(companyId, { email: EMAIL }, { type: "TRANSACTIONAL", channel: "EMAIL" }), {
      isEligible: false,
      ineligibilityReason: "NOT_SUBSCRIBED",
    });
    assert.deepEqual(await service.isEligible(companyId, { email: EMAIL }, { type: "MARKETING", channel: "TEXT" }), {
      isEligible: false,
      ineligibilityReason: "NOT_SUBSCRIBED",
    });
    await service.unsubscribe(companyId, { user: { phone: PHONE } });
    await t.scheduler.flush();
    assert.deepEqual(await service.eligibility(companyId, { phone: PHONE }), [
      { subscription: { type: "MARKETING", channel: "TEXT" }, eligibility: { isEligible: false, ineligibilityReason: "OPTED_OUT" } },
      { subscription: { type: "TRANSACTIONAL", channel: "TEXT" }, eligibility: { isEligible: false, ineligibilityReason: "OPTED_OUT" } },
    ]);
    await t.stop();
  });
});
