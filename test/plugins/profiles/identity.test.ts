import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import type { EventRecord } from "../../../plugins/profiles/index.ts";
import { sortableId } from "../../../src/index.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";
import { testStorage } from "../../support/test-storage.ts";
import { withCollectionMethod, wrapStorage } from "../../support/storage-wrappers.ts";
import { EMAIL, PHONE, eventsOf, post, profileOf, startProfilesKit, storedCounts, tokenWith } from "./support.ts";

const identify = (body: unknown, token?: string) => ["/v1/identity-resolution/user-identifiers", body, token] as const;

describe("POST /v1/identity-resolution/user-identifiers", () => {
  it("answers 202 with an empty body and links every identifier to one profile", async () => {
    const t = await startProfilesKit();
    const body = { phone: PHONE, email: "Ada@Example.com", clientUserId: "u-1", shopifyId: "s-1", klaviyoId: "k-1", customIdentifiers: [{ name: "loyaltyId", value: "L-9" }] };
    const response = await post(t, ...identify(body));
    assert.deepEqual([response.status, response.body, response.headers["content-type"]], [202, "", undefined]);
    const profile = await profileOf(t, "clientUserId", "u-1");
    assert.ok(profile);
    assert.deepEqual(
      profile.identifiers.map(({ kind, name, value }) => [kind, name, value]),
      [["phone", undefined, PHONE], ["email", undefined, EMAIL], ["clientUserId", undefined, "u-1"], ["shopifyId", undefined, "s-1"], ["klaviyoId", undefined, "k-1"], ["custom", "loyaltyId", "L-9"]],
    );
    assert.deepEqual(profile.externalIdentifiers, { clientUserId: "u-1", shopifyId: "s-1", klaviyoId: "k-1", customIdentifiers: [{ name: "loyaltyId", value: "L-9" }] });
    assert.equal((await profileOf(t, "phone", PHONE))?.id, profile.id);
    assert.equal((await profileOf(t, "email", EMAIL))?.id, profile.id);
    await t.stop();
  });

  it("refuses a clientUserId or a custom identifier alone, and malformed identifiers, naming the field; stores nothing", async () => {
    const t = await startProfilesKit();
    const before = await storedCounts(t);
    const refused: Array<[unknown, string[]]> = [
      [{}, ["phone", "email"]],
      [undefined, ["body"]],
      [{ clientUserId: "u-1" }, ["clientUserId"]],
      [{ customIdentifiers: [{ name: "loyaltyId", value: "L-9" }] }, ["customIdentifiers"]],
      [{ customIdentifiers: { loyaltyId: "L-9" } }, ["customIdentifiers"]],
      [{ phone: "+1 914 844 0001" }, ["phone"]],
      [{ email: "ada" }, ["email"]],
      [{ phone: PHONE, customIdentifiers: [{ name: "loyaltyId" }] }, ["customIdentifiers.0.value"]],
      [{ phone: PHONE, clientUserId: "x".repeat(257) }, ["clientUserId"]],
    ];
    for (const [body, fields] of refused) {
      const response = await post(t, ...identify(body));
      assert.equal(response.status, 400, `${JSON.stringify(body)}: ${response.body}`);
      assert.deepEqual(t.json(response).error.details.map((detail: { path: string }) => detail.path), fields, JSON.stringify(body));
    }
    assert.deepEqual(await storedCounts(t), before);
    assert.equal((await post(t, ...identify({ clientUserId: "u-1", customIdentifiers: { loyaltyId: "L-9" } }))).status, 202, "two identifiers link");
    await t.stop();
  });

  it("is limited to 10 requests a second per token (429 beyond), the events routes to 150", async () => {
    const t = await startProfilesKit({ config: {} });
    for (let i = 0; i < 10; i++) assert.equal((await post(t, ...identify({ phone: PHONE, clientUserId: `u-${i}` }))).status, 202);
    const limited = await post(t, ...identify({ phone: PHONE }));
    assert.equal(limited.status, 429);
    assert.equal(limited.headers["x-ratelimit-limit"], "10");
    for (let i = 0; i < 20; i++) assert.equal((await post(t, "/v1/events/custom", { type: "Seen", user: { phone: PHONE } })).status, 200);
    t.clock.advance(1000);
    assert.equal((await post(t, ...identify({ phone: PHONE }))).status, 202);
    await t.stop();
  });

  it("needs the identity:write scope", async () => {
    const t = await startProfilesKit();
    const token = await tokenWith(t, ["events:write", "attributes:write", "subscriptions:write"]);
    const response = await post(t, ...identify({ phone: PHONE }, token));
    assert.equal(response.status, 403);
    assert.match(t.json(response).error.message, /identity:write/);
    await t.stop();
  });
});

describe("the merge rule", () => {
  it("merges the profiles two identifiers already belong to into the oldest: identifiers, events and the attribute set last move to it", async () => {
    const t = await startProfilesKit();
    await post(t, "/v1/attributes/custom", { properties: { tier: "gold", visits: 1 }, user: { phone: PHONE } });
    await post(t, "/v1/events/custom", { type: "Seen on phone", user: { phone: PHONE } });
    t.clock.advance(60_000);
    await post(t, "/v1/attributes/custom", { properties: { tier: "silver", city: "Paris" }, user: { email: EMAIL, externalIdentifiers: { clientUserId: "u-1" } } });
    await post(t, "/v1/events/custom", { type: "Seen on email", user: { email: EMAIL } });
    const older = await profileOf(t, "phone", PHONE);
    const newer = await profileOf(t, "email", EMAIL);
    assert.notEqual(older?.id, newer?.id);

    t.clock.advance(60_000);
    const merged: string[] = [];
    assert.equal((await post(t, "/v1/identity-resolution/user-identifiers", { phone: PHONE, email: EMAIL })).status, 202);
    for (const [kind, value] of [["phone", PHONE], ["email", EMAIL], ["clientUserId", "u-1"]] as const) merged.push((await profileOf(t, kind, value))!.id);
    assert.deepEqual(merged, [older!.id, older!.id, older!.id], "the oldest profile survives");
    const profile = (await profileOf(t, "email", EMAIL))!;
    assert.deepEqual(profile.identifiers.map((identifier) => identifier.value), [PHONE, EMAIL, "u-1"]);
    assert.deepEqual(
      profile.attributes.map(({ name, value }) => [name, value]),
      [["city", "Paris"], ["tier", "silver"], ["visits", 1]],
      "an attribute both held keeps the value set last",
    );
    assert.deepEqual((await eventsOf(t, "phone", PHONE)).map((event) => event.type), ["Seen on email", "Seen on phone"]);
    assert.equal(await t.kit.storage.collection<{ id: string; mergedInto?: string }>("profiles_profiles").count({ mergedInto: older!.id }), 1, "the merged profile stays as an alias");
    await t.stop();
  });

  it("keeps in the person's timeline an event written to the merged profile by a request that raced with the merge", async () => {
    const t = await startProfilesKit();
    await post(t, "/v1/events/custom", { type: "A", user: { phone: PHONE } });
    t.clock.advance(1);
    await post(t, "/v1/events/custom", { type: "B", user: { email: EMAIL } });
    const merging = (await profileOf(t, "email", EMAIL))!.id;
    await post(t, "/v1/identity-resolution/user-identifiers", { phone: PHONE, email: EMAIL });
    // As a request that read the email's profile before the merge would write its event:
    const now = t.clock.now();
    const id = sortableId(now);
    await t.kit.storage.collection<EventRecord>("profiles_events").insert({ id, companyId: t.company.companyId, profileId: merging, seq: `${now}${id}`, kind: "custom", type: "Raced", occurredAt: now, receivedAt: now });
    assert.deepEqual((await eventsOf(t, "phone", PHONE)).map((event) => event.type), ["Raced", "B", "A"]);
    await t.stop();
  });

  it("merges three profiles named by one request, and aliases of aliases point at the survivor", async () => {
    const t = await startProfilesKit();
    await post(t, "/v1/identity-resolution/user-identifiers", { phone: PHONE });
    t.clock.advance(1);
    await post(t, "/v1/identity-resolution/user-identifiers", { email: EMAIL, clientUserId: "u-1" });
    t.clock.advance(1);
    await post(t, "/v1/identity-resolution/user-identifiers", { phone: "+19148440002", klaviyoId: "k-1" });
    t.clock.advance(1);
    // Second and third first, then the first with them.
    await post(t, "/v1/identity-resolution/user-identifiers", { clientUserId: "u-1", klaviyoId: "k-1" });
    await post(t, "/v1/identity-resolution/user-identifiers", { phone: PHONE, email: EMAIL });
    const first = (await profileOf(t, "phone", PHONE))!;
    assert.deepEqual(first.identifiers.map((identifier) => identifier.value).sort(), [PHONE, "+19148440002", EMAIL, "k-1", "u-1"].sort());
    const profiles = t.kit.storage.collection<{ id: string; mergedInto?: string }>("profiles_profiles");
    assert.deepEqual((await profiles.find()).items.map((profile) => profile.mergedInto ?? "live").sort(), [first.id, first.id, "live"]);
    await t.stop();
  });

  it("writes a new person's profile once, and touches a known one only when an identifier joins it", async () => {
    const updated: string[] = [];
    const storage = withCollectionMethod(await testStorage(), "update", (update, collection) => (id, patch, options) => {
      if (collection === "profiles_profiles") updated.push(id);
      return update(id, patch, options);
    });
    const t = await startProfilesKit({ storage });
    assert.equal((await post(t, ...identify({ phone: PHONE }))).status, 202);
    const profile = (await profileOf(t, "phone", PHONE))!;
    assert.deepEqual(updated, [], "a profile created by the link has its updatedAt already");
    assert.equal((await post(t, ...identify({ phone: PHONE }))).status, 202);
    assert.deepEqual(updated, [], "nothing new: nothing written");
    t.clock.advance(60_000);
    assert.equal((await post(t, ...identify({ phone: PHONE, email: EMAIL }))).status, 202);
    assert.deepEqual(updated, [profile.id]);
    assert.equal((await t.kit.storage.collection<{ id: string; updatedAt: number }>("profiles_profiles").get(profile.id))?.updatedAt, t.clock.now());
    await t.stop();
  });

  it("links a new person inside the caller's transaction on SQLite without a transaction (savepoint) of its own, and is undone with it", async () => {
    let transactions = 0;
    const sqlite = sqliteStorage({ filename: join(temporaryDirectory("identity-link"), "reachkit.db") });
    const storage = wrapStorage(sqlite, { transaction: (fn) => (transactions++, sqlite.transaction(fn)), inTransaction: () => sqlite.inTransaction!() });
    const t = await startProfilesKit({ storage });
    const profiles = t.kit.plugin("profiles");
    const person = [{ kind: "phone", value: PHONE }, { kind: "email", value: EMAIL }] as const;
    transactions = 0;
    await storage.transaction(() => profiles.link(t.company.companyId, person));
    assert.equal(transactions, 1, "the caller's transaction alone");
    const profile = (await profileOf(t, "phone", PHONE))!;
    assert.equal((await profileOf(t, "email", EMAIL))?.id, profile.id);
    const other = [{ kind: "phone", value: "+19148440002" }] as const;
    await assert.rejects(storage.transaction(async () => {
      await profiles.link(t.company.companyId, other);
      throw new Error("the caller fails after the link");
    }), /the caller fails/);
    assert.equal(await profiles.find(t.company.companyId, other[0]), undefined);
    assert.equal(await storage.collection("profiles_profiles").count(), 1);
    await t.stop();
  });

  it("makes one profile of concurrent first requests about a new person", async () => {
    const t = await startProfilesKit();
    const sends = Array.from({ length: 12 }, (_, i) => post(t, "/v1/events/custom", { type: `E${i}`, user: { phone: PHONE, email: EMAIL } }));
    assert.deepEqual(new Set((await Promise.all(sends)).map((response) => response.status)), new Set([200]));
    assert.equal(await t.kit.storage.collection("profiles_profiles").count(), 1);
    assert.equal(await t.kit.storage.collection("profiles_identifiers").count(), 2);
    assert.equal((await eventsOf(t, "email", EMAIL)).length, 12);
    await t.stop();
  });
});
