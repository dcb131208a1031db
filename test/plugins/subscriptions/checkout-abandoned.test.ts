import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { graphqlPlugin } from "../../../plugins/graphql/index.ts";
import { defaultPlugins, startTestKit, type Json } from "../../support/test-kit.ts";
import { EMAIL, eligibilityRows, optIn, PHONE, textsTo, unsubscribe } from "./support.ts";

describe("the CHECKOUT_ABANDONED subscription type", () => {
  it("is accepted wherever a type is: sign-up units of that type, opt-in, eligibility, GraphQL and unsubscribe lists", async () => {
    const t = await startTestKit({ plugins: [...defaultPlugins(), graphqlPlugin()], config: { rateLimits: { "opt-in": 100, unsubscribe: 100 } } });
    const unit = await t.kit.plugin("subscriptions").signUpUnits.create({ companyId: t.company.companyId, type: "CHECKOUT_ABANDONED", language: "en", country: "US" });
    await optIn(t, { user: { phone: PHONE }, singleOptIn: true });
    const bySource = await optIn(t, { user: { phone: PHONE }, signUpSourceId: unit.id, locale: undefined, subscriptionType: undefined, singleOptIn: true });
    assert.equal(bySource.status, 202, bySource.body);
    assert.deepEqual(t.json(bySource).subscriptionResponses, [{ subscription: { type: "CHECKOUT_ABANDONED", channel: "TEXT" }, subscriptionCreationStatus: "NEWLY_CREATED" }]);
    const byType = await optIn(t, { user: { email: EMAIL }, subscriptionType: "CHECKOUT_ABANDONED" });
    assert.equal(byType.status, 202, byType.body);
    await t.scheduler.flush();
    // Cart reminders are marketing texts: the welcome carries the marketing legal language.
    assert.match(textsTo(t, PHONE).at(-1) ?? "", /recurring automated marketing texts/);
    assert.deepEqual(await eligibilityRows(t, `phone=%2B19148440001&email=${encodeURIComponent(EMAIL)}`), [
      ["MARKETING", "TEXT", true],
      ["CHECKOUT_ABANDONED", "TEXT", true],
      ["CHECKOUT_ABANDONED", "EMAIL", true],
    ]);
    const query = `{ viewer { installedApplication { installerCompany { user(phone: "${PHONE}") { subscriptions { subscriptionEligibilities { subscription { type } } } } } } } }`;
    const graph = t.json(await t.request({ method: "POST", url: "/v1/graphql", body: { query } }));
    assert.deepEqual(
      graph.data.viewer.installedApplication.installerCompany.user.subscriptions.subscriptionEligibilities.map((row: Json) => row.subscription.type),
      ["TYPE_MARKETING", "TYPE_CHECKOUT_ABANDONED"],
    );
    const out = await unsubscribe(t, { user: { phone: PHONE }, subscriptions: [{ type: "CHECKOUT_ABANDONED", channel: "TEXT" }] });
    assert.equal(out.status, 202, out.body);
    assert.deepEqual(t.json(out).subscriptionResponses, [{ subscription: { type: "CHECKOUT_ABANDONED", channel: "TEXT" }, subscriptionUnsubscribeStatus: "NEWLY_UNSUBSCRIBED" }]);
    await t.scheduler.flush();
    assert.deepEqual(await eligibilityRows(t, "phone=%2B19148440001"), [
      ["MARKETING", "TEXT", true],
      ["CHECKOUT_ABANDONED", "TEXT", false],
    ]);
    await t.stop();
  });
});
