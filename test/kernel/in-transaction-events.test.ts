import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { profilesPlugin } from "../../plugins/profiles/index.ts";
import { defaultPlugins, startTestKit, type TestKit } from "../support/test-kit.ts";

/**
 * EventBus.onInTransaction: a listener runs inside the storage transaction of
 * the change that emitted the event, so what it writes commits with the change
 * or not at all (journeys rely on it: a crash between an event and its
 * reaction is impossible). Shown by a listener that fails: the change is not
 * stored either.
 */
describe("in-transaction listeners commit with the change that emitted the event", () => {
  let t: TestKit;
  afterEach(() => t.stop());

  it("a profile event whose in-transaction listener fails is not stored; one whose listener writes stores both", async () => {
    t = await startTestKit({ plugins: [...defaultPlugins(), profilesPlugin()] });
    const profiles = t.kit.plugin("profiles");
    const companyId = t.company.companyId;
    const reactions = t.kit.storage.collection<{ id: string }>("reachkit_jobs");
    const stop = t.kit.events.onInTransaction("profile.event.recorded", () => {
      throw new Error("the reaction could not be recorded");
    });
    await assert.rejects(profiles.recordCustomEvent(companyId, { type: "Viewed", user: { phone: "+19148440001" } }), /the reaction could not be recorded/);
    const profileId = await profiles.find(companyId, { kind: "phone", value: "+19148440001" });
    assert.deepEqual(profileId === undefined ? [] : (await profiles.events(companyId, profileId, { first: 10 })).events, []);
    stop();

    const before = await reactions.count();
    t.kit.events.onInTransaction("profile.event.recorded", async (event) => {
      await t.kit.jobs.enqueue({ type: "test.reaction", payload: { eventId: event.eventId }, runAt: t.clock.now() + 60_000 });
    });
    await profiles.recordCustomEvent(companyId, { type: "Viewed", user: { phone: "+19148440001" } });
    assert.equal(await reactions.count(), before + 1);
  });

  it("a subscription whose in-transaction listener fails is not created", async () => {
    t = await startTestKit();
    t.kit.events.onInTransaction("subscription.created", () => {
      throw new Error("no");
    });
    const optIn = { user: { phone: "+19148440001" }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING", singleOptIn: true } as const;
    await assert.rejects(t.kit.plugin("subscriptions").optInNow(t.company.companyId, optIn), /no/);
    assert.deepEqual(await t.kit.plugin("subscriptions").subscriptions(t.company.companyId, { phone: "+19148440001" }), []);
  });
});
