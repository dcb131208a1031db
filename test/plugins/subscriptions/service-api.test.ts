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
    // 1 subscriber + 2 subscriptions + 2 change records + 1 queued job
    assert.equal(removed, 6);
    const user = { phone: PHONE, email: EMAIL };
    assert.equal(await service.findSubscriber(t.company.companyId, user), undefined);
    assert.deepEqual(await service.subscriptions(t.company.companyId, user), []);
    assert.deepEqual(await service.changes(t.company.companyId, user), []);
    assert.deepEqual(await t.kit.jobs.list({ companyId: t.company.companyId, type: "subscriptions.opt-in", status: "queued" }), []);
    assert.equal((await service.subscriptions(other.company.id, user)).length, 2, "the other company keeps its data");
    assert.ok(await service.findSubscriber(other.company.id, { email: EMAIL }));
    assert.equal(await t.kit.deleteSubjectData({ companyId: t.company.companyId, email: EMAIL }), 0);
    await t.stop();
  });
});
