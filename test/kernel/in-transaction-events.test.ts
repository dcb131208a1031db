import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { afterEach, describe, it } from "node:test";
import { memoryStorage } from "../../adapters/storage/memory/index.ts";
import { profilesPlugin } from "../../plugins/profiles/index.ts";
import type { Storage } from "../../src/index.ts";
import { wrapStorage } from "../support/storage-wrappers.ts";
import { defaultPlugins, startTestKit, type TestKit } from "../support/test-kit.ts";

/** `storage`, counting the transactions it runs that are not nested in another. */
function countingTransactions(storage: Storage): { storage: Storage; outermost: () => number } {
  const inside = new AsyncLocalStorage<true>();
  let outermost = 0;
  return {
    storage: wrapStorage(storage, {
      transaction(fn) {
        if (inside.getStore() === undefined) outermost++;
        return storage.transaction(() => inside.run(true, fn));
      },
    }),
    outermost: () => outermost,
  };
}

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

  it("events posted over HTTP at once share one commit, each stored with its reaction; one whose listener fails there fails alone", async () => {
    // In memory, as on SQLite, a request's reads finish within the turn it arrives in, so requests sent at once
    // reach the write together (on PostgreSQL each read waits for the network, and they spread over turns).
    const counting = countingTransactions(memoryStorage());
    t = await startTestKit({ plugins: [...defaultPlugins(), profilesPlugin()], storage: counting.storage, config: { rateLimits: { default: Infinity } } });
    const companyId = t.company.companyId;
    const profiles = t.kit.plugin("profiles");
    const phones = ["+19148440001", "+19148440002", "+19148440003", "+19148440004", "+19148440005"];
    for (const phone of phones) await profiles.identify(companyId, { phone });
    let failing: string | undefined;
    t.kit.events.onInTransaction("profile.event.recorded", async (event) => {
      await t.kit.jobs.enqueue({ type: "test.reaction", payload: { eventId: event.eventId }, runAt: t.clock.now() + 60_000 });
      if ((await profiles.person(companyId, event.profileId))?.phone === failing) throw new Error("the reaction could not be recorded");
    });
    const reactions = t.kit.storage.collection("reachkit_jobs");
    const timeline = async (phone: string) => {
      const profileId = (await profiles.find(companyId, { kind: "phone", value: phone }))!;
      return (await profiles.events(companyId, profileId, { first: 10 })).events.map((event) => event.type);
    };

    let transactions = counting.outermost();
    const answers = await Promise.all(phones.map((phone) => t.request({ method: "POST", url: "/v1/events/custom", body: { type: "Viewed", user: { phone } } })));
    assert.deepEqual(answers.map((answer) => answer.status), [200, 200, 200, 200, 200]);
    assert.equal(counting.outermost() - transactions, 1);
    assert.equal(await reactions.count(), 5);
    for (const phone of phones) assert.deepEqual(await timeline(phone), ["Viewed"], phone);

    // The same shared commit in process (as the routes ask for it), with a listener failing for one person.
    failing = phones[2];
    transactions = counting.outermost();
    const outcomes = await Promise.allSettled(phones.map((phone) => profiles.recordCustomEvent(companyId, { type: "Bought", user: { phone } }, { groupCommit: true })));
    assert.deepEqual(outcomes.map((outcome) => outcome.status), ["fulfilled", "fulfilled", "rejected", "fulfilled", "fulfilled"]);
    assert.match(String((outcomes[2] as PromiseRejectedResult).reason), /the reaction could not be recorded/);
    assert.equal(counting.outermost() - transactions, 1);
    assert.equal(await reactions.count(), 5 + 4);
    for (const phone of phones) assert.deepEqual(await timeline(phone), phone === failing ? ["Viewed"] : ["Bought", "Viewed"], phone);
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
