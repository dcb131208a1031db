import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { profilesPlugin } from "../../../plugins/profiles/index.ts";
import { DEFAULT_REPEAT_TEXT_WINDOW_MS, type SubscriptionEvent } from "../../../plugins/subscriptions/index.ts";
import type { JobDefinition, Storage } from "../../../src/index.ts";
import { withCollectionMethod } from "../../support/storage-wrappers.ts";
import { defaultPlugins, startTestKit, type Json, type TestKit } from "../../support/test-kit.ts";
import { testStorage } from "../../support/test-storage.ts";
import { EMAIL, eligibilityRows, optIn, PHONE, textsTo } from "./support.ts";

const OTHER_PHONE = "+15145550123";

async function expectRefused(t: TestKit, body: Json, path: string): Promise<void> {
  const response = await t.request({ method: "POST", url: "/v1/subscriptions", body });
  assert.equal(response.status, 400, `${JSON.stringify(body).slice(0, 200)} → ${response.body.slice(0, 300)}`);
  const error = t.json(response).error;
  assert.ok(
    error.details.some((detail: Json) => detail.path === path),
    `expected a detail naming ${path}, got ${JSON.stringify(error.details).slice(0, 300)}`,
  );
}

async function assertNothingStoredOrSent(t: TestKit): Promise<void> {
  await t.scheduler.flush();
  assert.deepEqual(await t.kit.jobs.list({ type: "subscriptions.opt-in" }), []);
  assert.equal(t.sms.sent.length, 0);
  assert.deepEqual(await t.kit.plugin("subscriptions").subscriptions(t.company.companyId, { phone: PHONE, email: EMAIL }), []);
}

describe("POST /v1/subscriptions: bad input", () => {
  it("answers 400 naming the field, and stores and sends nothing", async () => {
    const t = await startTestKit({ config: { rateLimits: { "opt-in": 100 } } });
    const other = await t.kit.provisionCompany({ name: "Other" });
    const [otherUnit] = other.output.signUpSources as Array<{ id: string }>;
    const unit = { locale: { language: "en", country: "US" }, subscriptionType: "MARKETING" };
    await expectRefused(t, { ...unit, user: { phone: "19148440001" } }, "user.phone");
    await expectRefused(t, { ...unit, user: { phone: "+1-914-844-0001" } }, "user.phone");
    await expectRefused(t, { ...unit, user: { phone: "+1 (914) 844 0001" } }, "user.phone");
    await expectRefused(t, { ...unit, user: {} }, "user");
    await expectRefused(t, { ...unit, user: { name: "Ada", cookie: "x" } }, "user");
    await expectRefused(t, { ...unit }, "user");
    await expectRefused(t, { ...unit, user: [PHONE] }, "user");
    await expectRefused(t, { ...unit, subscriptionType: "OTHER", user: { phone: PHONE } }, "subscriptionType");
    await expectRefused(t, { signUpSourceId: otherUnit!.id, user: { phone: PHONE } }, "signUpSourceId");
    await expectRefused(t, { user: { phone: PHONE } }, "signUpSourceId");
    await expectRefused(t, { locale: "en-US", user: { phone: PHONE } }, "subscriptionType");
    await expectRefused(t, { subscriptionType: "MARKETING", user: { phone: PHONE } }, "locale");
    await expectRefused(t, { ...unit, locale: "english", user: { phone: PHONE } }, "locale");
    await expectRefused(t, { ...unit, locale: { language: "fr", country: "FR" }, user: { phone: PHONE } }, "locale");
    await expectRefused(t, { ...unit, user: { email: `${"a".repeat(100_000)}@example.com` } }, "user.email");
    await expectRefused(t, { ...unit, user: { email: "not an email" } }, "user.email");
    await expectRefused(t, { ...unit, user: { phone: PHONE }, singleOptIn: "yes" }, "singleOptIn");
    await expectRefused(t, { ...unit, user: { phone: PHONE }, externalIdentifiers: { clientUserId: 42 } }, "externalIdentifiers.clientUserId");
    await expectRefused(t, { ...unit, user: { phone: PHONE }, externalIdentifiers: { customIdentifiers: "x" } }, "externalIdentifiers.customIdentifiers");
    await assertNothingStoredOrSent(t);
    await t.stop();
  });

  it("answers 400 when the locale and type match two sign-up units, and opts nobody in", async () => {
    const t = await startTestKit();
    await t.kit.plugin("subscriptions").signUpUnits.create({ companyId: t.company.companyId, type: "MARKETING", language: "en", country: "US" });
    const response = await optIn(t, { user: { phone: PHONE } });
    assert.equal(response.status, 400);
    assert.match(t.json(response).error.details[0].message, /2 API sign-up units match MARKETING en-US; give signUpSourceId/);
    assert.equal(t.json(response).error.details[0].path, "locale");
    await assertNothingStoredOrSent(t);
    await t.stop();
  });

  it("needs the subscriptions:write scope", async () => {
    const t = await startTestKit();
    const accounts = t.kit.plugin("accounts");
    const app = await accounts.createApplication({ companyId: t.company.companyId, name: "reader", scopes: ["subscriptions:read"] });
    const reader = await accounts.issueCredential({ companyId: t.company.companyId, kind: "api_key", applicationId: app.id });
    assert.equal((await optIn(t, { user: { phone: PHONE } }, reader.token)).status, 403);
    await t.stop();
  });
});

describe("POST /v1/subscriptions", () => {
  it("makes a pending TEXT subscription for a phone and an active EMAIL one for an email, and echoes the user and identifiers", async () => {
    const t = await startTestKit();
    const response = await optIn(t, {
      user: { phone: PHONE, email: "Ada@Example.com", extra: true },
      externalIdentifiers: { clientUserId: "c-1", shopifyId: "s-1", customIdentifiers: { loyalty: "gold" }, unknown: 1 },
      externalEventId: "ignored",
    });
    assert.equal(response.status, 202);
    assert.deepEqual(t.json(response), {
      user: { phone: PHONE, email: EMAIL },
      externalIdentifiers: { clientUserId: "c-1", shopifyId: "s-1", customIdentifiers: [{ name: "loyalty", value: "gold" }] },
      subscriptionResponses: [
        { subscription: { type: "MARKETING", channel: "TEXT" }, subscriptionCreationStatus: "NEWLY_CREATED" },
        { subscription: { type: "MARKETING", channel: "EMAIL" }, subscriptionCreationStatus: "NEWLY_CREATED" },
      ],
    });
    await t.scheduler.flush();
    assert.deepEqual(await eligibilityRows(t, `phone=%2B19148440001&email=${EMAIL}`), [
      ["MARKETING", "TEXT", false],
      ["MARKETING", "EMAIL", true],
    ]);
    assert.equal(textsTo(t, PHONE).length, 1, "one text: the Reply Y request");
    const subscriber = await t.kit.plugin("subscriptions").findSubscriber(t.company.companyId, { email: EMAIL });
    assert.equal(subscriber?.phone, PHONE, "one subscriber holds both addresses");
    assert.deepEqual(subscriber?.externalIdentifiers?.customIdentifiers, [{ name: "loyalty", value: "gold" }]);
    assert.deepEqual(subscriber?.locale, { language: "en", country: "US" });
    await t.stop();
  });

  it("with singleOptIn activates at once and sends only the legal message", async () => {
    const t = await startTestKit();
    assert.equal((await optIn(t, { user: { phone: PHONE }, singleOptIn: true })).status, 202);
    await t.scheduler.flush();
    assert.deepEqual(await eligibilityRows(t, "phone=%2B19148440001"), [["MARKETING", "TEXT", true]]);
    const texts = textsTo(t, PHONE);
    assert.equal(texts.length, 1);
    assert.doesNotMatch(texts[0]!, /Reply Y/);
    assert.match(texts[0]!, /^Acme: You are subscribed to recurring automated marketing texts from Acme\. Consent is not a condition of purchase/);
    await t.stop();
  });

  it("records an existing subscription's opt-in again: PREVIOUSLY_CREATED and the already-subscribed text", async () => {
    const t = await startTestKit();
    await optIn(t, { user: { phone: PHONE }, singleOptIn: true });
    await t.scheduler.flush();
    const again = await optIn(t, { user: { phone: PHONE } });
    assert.equal(t.json(again).subscriptionResponses[0].subscriptionCreationStatus, "PREVIOUSLY_CREATED");
    await t.scheduler.flush();
    assert.match(textsTo(t, PHONE)[1]!, /^Acme: You are already subscribed to texts from Acme/);
    const changes = await t.kit.plugin("subscriptions").changes(t.company.companyId, { phone: PHONE });
    assert.deepEqual(
      changes.map((c) => [c.action, c.to ?? null, c.source]),
      [
        ["opt_in", "active", "api"],
        ["opt_in_repeated", null, "api"],
      ],
    );
    assert.deepEqual(await eligibilityRows(t, "phone=%2B19148440001"), [["MARKETING", "TEXT", true]]);
    await t.stop();
  });

  it("asks again for the Y of a pending subscription (once the repeat window is over), and a single opt-in of it confirms it", async () => {
    const t = await startTestKit();
    await optIn(t, { user: { phone: PHONE } });
    await t.scheduler.flush();
    await t.scheduler.advance(DEFAULT_REPEAT_TEXT_WINDOW_MS + 1);
    assert.equal(t.json(await optIn(t, { user: { phone: PHONE } })).subscriptionResponses[0].subscriptionCreationStatus, "PREVIOUSLY_CREATED");
    await t.scheduler.flush();
    assert.equal(textsTo(t, PHONE).length, 2);
    assert.match(textsTo(t, PHONE)[1]!, /Reply Y/);
    await optIn(t, { user: { phone: PHONE }, singleOptIn: true });
    await t.scheduler.flush();
    assert.match(textsTo(t, PHONE)[2]!, /You are subscribed/);
    assert.deepEqual(await eligibilityRows(t, "phone=%2B19148440001"), [["MARKETING", "TEXT", true]]);
    await t.stop();
  });

  it("opts in through a signUpSourceId: a transactional unit gets the transactional wording", async () => {
    const t = await startTestKit();
    const units = await t.kit.plugin("subscriptions").signUpUnits.list(t.company.companyId);
    const transactional = units.find((unit) => unit.type === "TRANSACTIONAL")!;
    const response = await t.request({ method: "POST", url: "/v1/subscriptions", body: { signUpSourceId: transactional.id, user: { phone: PHONE } } });
    assert.deepEqual(t.json(response).subscriptionResponses[0].subscription, { type: "TRANSACTIONAL", channel: "TEXT" });
    await t.scheduler.flush();
    assert.match(textsTo(t, PHONE)[0]!, /^Acme: Reply Y to receive automated account and order texts from Acme/);
    await t.stop();
  });

  it("writes in French for a fr-CA opt-in, with the locale given as a string", async () => {
    const t = await startTestKit();
    await t.kit.plugin("subscriptions").signUpUnits.create({ companyId: t.company.companyId, type: "MARKETING", language: "fr", country: "CA" });
    assert.equal((await optIn(t, { user: { phone: OTHER_PHONE }, locale: "fr_CA" })).status, 202);
    await t.scheduler.flush();
    assert.match(textsTo(t, OTHER_PHONE)[0]!, /^Acme : Répondez Y pour recevoir des textos marketing/);
    await t.stop();
  });

  it("sends each text once and changes nothing more when its job runs again", async () => {
    const t = await startTestKit();
    await optIn(t, { user: { phone: PHONE, email: EMAIL } });
    await t.scheduler.flush();
    const [job] = await t.kit.jobs.list({ type: "subscriptions.opt-in" });
    const { handler } = t.kit.plugin("subscriptions").jobHandlers()["subscriptions.opt-in"] as JobDefinition<never>;
    await handler(job!.payload as never, {} as never);
    await t.scheduler.flush();
    assert.equal(textsTo(t, PHONE).length, 1);
    assert.equal((await t.kit.plugin("subscriptions").changes(t.company.companyId, { phone: PHONE, email: EMAIL })).length, 2);
    await t.stop();
  });

  it("stores nothing of an opt-in whose job fails half-way, and does it all once when the job runs again", async () => {
    let failures = 1;
    const storage = withCollectionMethod(await testStorage(), "insert", (insert, collection) => (doc) => {
      if (collection === "reachkit_outbox" && failures-- > 0) return Promise.reject(new Error("disk full"));
      return insert(doc);
    });
    const t = await startTestKit({ storage });
    await optIn(t, { user: { phone: PHONE } });
    await t.scheduler.flush();
    const subscriptions = t.kit.plugin("subscriptions");
    assert.deepEqual(await subscriptions.subscriptions(t.company.companyId, { phone: PHONE }), []);
    assert.deepEqual(await subscriptions.changes(t.company.companyId, { phone: PHONE }), []);
    assert.equal(await t.kit.storage.collection("subscriptions_subscribers").count(), 0);
    const [failed] = await t.kit.jobs.list({ type: "subscriptions.opt-in" });
    assert.deepEqual([failed?.status, failed?.attempts], ["queued", 1]);
    t.clock.advance(60_000);
    await t.scheduler.flush();
    assert.deepEqual((await subscriptions.subscriptions(t.company.companyId, { phone: PHONE })).map((s) => s.state), ["pending"]);
    assert.equal((await subscriptions.changes(t.company.companyId, { phone: PHONE })).length, 1);
    assert.equal(textsTo(t, PHONE).length, 1);
    await t.stop();
  });

  it("reads the company once to process an opt-in: the notice's wording and the text's sender number", async () => {
    let companyReads = 0;
    const storage = withCollectionMethod(await testStorage(), "get", (get, collection) => (id) => {
      if (collection === "accounts_companies") companyReads++;
      return get(id);
    });
    const t = await startTestKit({ storage });
    const company = await t.kit.plugin("accounts").getCompany(t.company.companyId);
    await optIn(t, { user: { phone: PHONE } });
    companyReads = 0;
    await t.scheduler.flush();
    assert.deepEqual((await t.kit.outbox.list({ to: PHONE })).map((message) => [message.from, message.body.split(":")[0]]), [[company!.senderNumber, company!.name]]);
    assert.equal(companyReads, 1);
    await t.stop();
  });

  it("reads a new person's identifiers once to process an opt-in, and links them to one profile", async () => {
    let identifierReads = 0;
    const noting = <M extends "find" | "findOne">(storage: Storage, method: M) =>
      withCollectionMethod(storage, method, (original, collection) => ((...args: unknown[]) => {
        if (collection === "profiles_identifiers") identifierReads++;
        return (original as (...args: unknown[]) => unknown)(...args);
      }) as typeof original);
    const t = await startTestKit({ storage: noting(noting(await testStorage(), "find"), "findOne"), plugins: [...defaultPlugins(), profilesPlugin()] });
    await optIn(t, { user: { phone: PHONE, email: EMAIL } });
    identifierReads = 0;
    await t.scheduler.flush();
    assert.equal(identifierReads, 1);
    const profiles = t.kit.plugin("profiles");
    const byPhone = await profiles.find(t.company.companyId, { kind: "phone", value: PHONE });
    assert.ok(byPhone !== undefined);
    assert.equal(await profiles.find(t.company.companyId, { kind: "email", value: EMAIL }), byPhone);
    await t.stop();
  });

  it("looks up no change record when an opt-in's job runs the first time, and changes and sends nothing twice when it runs again", async () => {
    let changeReads = 0;
    const storage = withCollectionMethod(await testStorage(), "findOne", (findOne, collection) => (where, orderBy) => {
      if (collection === "subscriptions_changes") changeReads++;
      return findOne(where, orderBy);
    });
    const t = await startTestKit({ storage });
    await optIn(t, { user: { phone: PHONE, email: EMAIL } });
    await t.scheduler.flush();
    assert.equal(changeReads, 0, "the first run's change records");
    const [job] = await t.kit.jobs.list({ type: "subscriptions.opt-in" });
    assert.equal(job!.attempts, 1);
    const { handler } = t.kit.plugin("subscriptions").jobHandlers()["subscriptions.opt-in"] as JobDefinition<never>;
    await handler(job!.payload as never, { attempt: 2 } as never);
    await t.scheduler.flush();
    assert.equal(changeReads, 2, "a later run looks up each channel's change");
    assert.equal(textsTo(t, PHONE).length, 1);
    assert.equal((await t.kit.plugin("subscriptions").changes(t.company.companyId, { phone: PHONE, email: EMAIL })).length, 2);
    await t.stop();
  });

  it("emits subscription.created when the job runs, and subscription.confirmed on the Y", async () => {
    const t = await startTestKit();
    const seen: Array<[string, SubscriptionEvent]> = [];
    t.kit.events.on("subscription.created", (event) => void seen.push(["created", event]));
    t.kit.events.on("subscription.confirmed", (event) => void seen.push(["confirmed", event]));
    await optIn(t, { user: { phone: PHONE } });
    assert.equal(seen.length, 0, "nothing happened yet");
    await t.scheduler.flush();
    const company = await t.kit.plugin("accounts").getCompany(t.company.companyId);
    await t.sms.deliverInbound({ from: PHONE, to: company!.senderNumber!, body: "YES" });
    assert.deepEqual(
      seen.map(([name, event]) => [name, event.companyId, event.type, event.channel, event.address, event.state, event.previousState ?? null, event.source]),
      [
        ["created", t.company.companyId, "MARKETING", "TEXT", PHONE, "pending", null, "api"],
        ["confirmed", t.company.companyId, "MARKETING", "TEXT", PHONE, "active", "pending", "sms_keyword"],
      ],
    );
    await t.stop();
  });
});
