import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { EMAIL, eventsOf, PHONE, post, profileOf, startProfilesKit } from "./support.ts";

const optIn = (user: Record<string, unknown>, externalIdentifiers?: Record<string, unknown>) => ({
  user,
  locale: { language: "en", country: "US" },
  subscriptionType: "MARKETING",
  singleOptIn: true,
  ...(externalIdentifiers ? { externalIdentifiers } : {}),
});

describe("subscribers and profiles", () => {
  it("an opt-in links the subscriber's phone, email and external identifiers to one profile when its job runs", async () => {
    const t = await startProfilesKit({ config: { rateLimits: { default: Infinity, "opt-in": Infinity } } });
    const accepted = await post(t, "/v1/subscriptions", optIn({ phone: PHONE, email: EMAIL }, { clientUserId: "c-1", shopifyId: "s-1", customIdentifiers: { loyaltyId: "L-9" } }));
    assert.equal(accepted.status, 202, accepted.body);
    assert.equal(await profileOf(t, "phone", PHONE), undefined, "the job has not run");
    await t.scheduler.flush();
    const profile = (await profileOf(t, "clientUserId", "c-1"))!;
    assert.deepEqual(profile.identifiers.map(({ kind, name, value }) => [kind, name, value]), [
      ["phone", undefined, PHONE],
      ["email", undefined, EMAIL],
      ["clientUserId", undefined, "c-1"],
      ["shopifyId", undefined, "s-1"],
      ["custom", "loyaltyId", "L-9"],
    ]);
    // The subscriber's clientUserId alone now names a person with a phone.
    assert.equal((await post(t, "/v1/events/custom", { type: "Viewed", user: { externalIdentifiers: { clientUserId: "c-1" } } })).status, 200);
    assert.equal((await eventsOf(t, "email", EMAIL)).length, 1);
    await t.stop();
  });

  it("an opt-in of a phone and an email known as two people merges their profiles, events included", async () => {
    const t = await startProfilesKit({ config: { rateLimits: { default: Infinity, "opt-in": Infinity } } });
    await post(t, "/v1/events/custom", { type: "Seen by phone", user: { phone: PHONE } });
    t.clock.advance(1);
    await post(t, "/v1/events/custom", { type: "Seen by email", user: { email: EMAIL } });
    const older = (await profileOf(t, "phone", PHONE))!.id;
    await post(t, "/v1/subscriptions", optIn({ phone: PHONE, email: EMAIL }));
    await t.scheduler.flush();
    assert.equal((await profileOf(t, "email", EMAIL))!.id, older);
    assert.deepEqual((await eventsOf(t, "email", EMAIL)).map((event) => event.type), ["Seen by email", "Seen by phone"]);
    await t.stop();
  });
});
