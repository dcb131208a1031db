import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SUBSCRIPTIONS_SERVICE, type SubscriptionEvent } from "../../../plugins/subscriptions/index.ts";
import { HttpError } from "../../../src/index.ts";
import { startTestKit } from "../../support/test-kit.ts";
import { EMAIL, PHONE, textsTo } from "./support.ts";

describe("the subscriptions service in process", () => {
  it("opts in through the same code path as the route, on the token other plugins resolve", async () => {
    const t = await startTestKit();
    const service = t.kit.resolve(SUBSCRIPTIONS_SERVICE);
    assert.equal(service, t.kit.plugin("subscriptions"));
    const accepted = await service.optIn(t.company.companyId, { user: { phone: PHONE, firstName: "Ada" }, locale: "en-US", subscriptionType: "MARKETING" });
    assert.deepEqual(accepted.subscriptionResponses, [{ subscription: { type: "MARKETING", channel: "TEXT" }, subscriptionCreationStatus: "NEWLY_CREATED" }]);
    assert.equal((await t.kit.jobs.get(accepted.jobId))?.status, "queued");
    await t.scheduler.flush();
    assert.match(textsTo(t, PHONE)[0]!, /Reply Y/);
    const subscriber = await service.findSubscriber(t.company.companyId, { phone: PHONE });
    assert.equal(subscriber?.firstName, "Ada");
    const [subscription] = await service.subscriptions(t.company.companyId, { phone: PHONE });
    assert.equal(subscription?.state, "pending");
    assert.equal(subscription?.source, "in_process");
    assert.equal(subscription?.subscribedAt, t.clock.now());
    await t.stop();
  });

  it("throws the route's 400 HttpError, naming the field, for invalid input", async () => {
    const t = await startTestKit();
    const service = t.kit.plugin("subscriptions");
    await assert.rejects(
      service.optIn(t.company.companyId, { user: { phone: "914-844-0001" }, locale: "en-US", subscriptionType: "MARKETING" }),
      (error: unknown) => error instanceof HttpError && error.status === 400 && error.details[0]?.path === "user.phone",
    );
    await assert.rejects(
      service.unsubscribe(t.company.companyId, { user: {} }),
      (error: unknown) => error instanceof HttpError && error.status === 400 && error.details[0]?.path === "user",
    );
    await t.stop();
  });

  it("emits subscription.unsubscribed with the source of the change", async () => {
    const t = await startTestKit();
    const service = t.kit.plugin("subscriptions");
    const seen: SubscriptionEvent[] = [];
    t.kit.events.on("subscription.unsubscribed", (event) => void seen.push(event));
    await service.optIn(t.company.companyId, { user: { email: EMAIL }, locale: "en-US", subscriptionType: "TRANSACTIONAL" });
    await t.scheduler.flush();
    await service.unsubscribe(t.company.companyId, { user: { email: EMAIL } }, { source: "legacy_api" });
    assert.equal(seen.length, 0);
    await t.scheduler.flush();
    assert.deepEqual(
      seen.map((e) => [e.type, e.channel, e.address, e.previousState, e.state, e.source]),
      [["TRANSACTIONAL", "EMAIL", EMAIL, "active", "unsubscribed", "legacy_api"]],
    );
    await t.stop();
  });
});

describe("deleteSubjectData", () => {
  it("deletes the subscriber, their subscriptions, change records and queued jobs at one company only", async () => {
    const t = await startTestKit({ config: { rateLimits: { "opt-in": 100 } } });
    const service = t.kit.plugin("subscriptions");
    const other = await t.kit.provisionCompany({ name: "Other" });
    const optIn = (companyId: string) => service.optIn(companyId, { user: { phone: PHONE, email: EMAIL }, locale: "en-US", subscriptionType: "MARKETING" });
    await optIn(t.company.companyId);
    await optIn(other.company.id);
    await t.scheduler.flush();
    await optIn(t.company.companyId); // still queued when the request arrives

    const removed = await t.kit.deleteSubjectData({ companyId: t.company.companyId, phone: PHONE });
    // 1 subscriber + 2 subscriptions + 2 change records + the finished and the queued job
    assert.equal(removed, 7);
    const user = { phone: PHONE, email: EMAIL };
    assert.equal(await service.findSubscriber(t.company.companyId, user), undefined);
    assert.deepEqual(await service.subscriptions(t.company.companyId, user), []);
    assert.deepEqual(await service.changes(t.company.companyId, user), []);
    assert.deepEqual(await t.kit.jobs.list({ companyId: t.company.companyId, type: "subscriptions.opt-in" }), [], "no payload keeps the phone");
    assert.equal((await t.kit.jobs.list({ companyId: other.company.id, type: "subscriptions.opt-in" })).length, 1);
    assert.equal((await service.subscriptions(other.company.id, user)).length, 2, "the other company keeps its data");
    assert.ok(await service.findSubscriber(other.company.id, { email: EMAIL }));
    assert.equal(await t.kit.deleteSubjectData({ companyId: t.company.companyId, email: EMAIL }), 0);
    await t.stop();
  });
});

describe("optInNow and unsubscribeNow (the legacy routes' in-call paths)", () => {
  it("opts in before returning, says whether the subscriber is new, and keeps an email on the subscriber only when told to subscribe TEXT alone", async () => {
    const t = await startTestKit();
    const service = t.kit.plugin("subscriptions");
    const created: SubscriptionEvent[] = [];
    t.kit.events.on("subscription.created", (event) => void created.push(event));
    const request = { user: { phone: PHONE, email: EMAIL, firstName: "Ada" }, locale: "en-US", subscriptionType: "MARKETING" as const, singleOptIn: true };
    const first = await service.optInNow(t.company.companyId, request, { source: "legacy_api", channels: ["TEXT"] });
    assert.equal(first.subscriberCreated, true);
    assert.deepEqual(
      [first.subscriber.phone, first.subscriber.email, first.subscriber.firstName],
      [PHONE, EMAIL, "Ada"],
      "the email is kept on the subscriber",
    );
    assert.deepEqual(first.subscriptionResponses, [{ subscription: { type: "MARKETING", channel: "TEXT" }, subscriptionCreationStatus: "NEWLY_CREATED" }]);
    assert.deepEqual(
      (await service.eligibility(t.company.companyId, { phone: PHONE, email: EMAIL })).map((e) => [e.subscription.channel, e.eligibility.isEligible]),
      [["TEXT", true]],
      "active at once, and no EMAIL subscription",
    );
    assert.deepEqual(created.map((e) => [e.channel, e.state, e.source]), [["TEXT", "active", "legacy_api"]], "emitted once committed");
    assert.deepEqual(await t.kit.jobs.list({ type: "subscriptions.opt-in" }), [], "no job");
    await t.scheduler.flush();
    assert.match(textsTo(t, PHONE)[0]!, /^Acme: You are subscribed to recurring automated marketing texts.*Consent is not a condition of purchase/);

    const again = await service.optInNow(t.company.companyId, request, { channels: ["TEXT"] });
    assert.equal(again.subscriberCreated, false);
    assert.equal(again.subscriber.id, first.subscriber.id);
    assert.equal(again.subscriptionResponses[0]?.subscriptionCreationStatus, "PREVIOUSLY_CREATED");
    await assert.rejects(
      service.optInNow(t.company.companyId, { ...request, user: { phone: PHONE } }, { channels: ["EMAIL"] }),
      (error: unknown) => error instanceof HttpError && error.status === 400 && error.details[0]?.path === "user",
    );
    await t.stop();
  });

  it("unsubscribes before returning, with the outcome, and texts only when asked", async () => {
    const t = await startTestKit();
    const service = t.kit.plugin("subscriptions");
    await service.optInNow(t.company.companyId, { user: { phone: PHONE }, locale: "en-US", subscriptionType: "MARKETING", singleOptIn: true });
    const silent = await service.unsubscribeNow(t.company.companyId, { user: { phone: PHONE }, notification: { disabled: true } }, { source: "legacy_api" });
    assert.deepEqual(silent.subscriptionResponses, [{ subscription: { type: "MARKETING", channel: "TEXT" }, subscriptionUnsubscribeStatus: "NEWLY_UNSUBSCRIBED" }]);
    assert.equal((await service.isEligible(t.company.companyId, { phone: PHONE }, { type: "MARKETING", channel: "TEXT" })).ineligibilityReason, "OPTED_OUT");
    const again = await service.unsubscribeNow(t.company.companyId, { user: { phone: PHONE } });
    assert.equal(again.subscriptionResponses[0]?.subscriptionUnsubscribeStatus, "PREVIOUSLY_UNSUBSCRIBED");
    await t.scheduler.flush();
    assert.deepEqual(textsTo(t, PHONE).slice(1), ["Acme: You are already unsubscribed from texts from Acme. Reply START to subscribe again."]);
    await t.stop();
  });
});
