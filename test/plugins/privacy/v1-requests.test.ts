import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { privacyPlugin, MAX_PROCESSING_DELAY_MS } from "../../../plugins/privacy/index.ts";
import type { PrivacyRequest } from "../../../plugins/privacy/index.ts";
import { createRequest, EMAIL, fetchRequest, PHONE, profileRecords, seedProfile, seedSubject, startPrivacyKit, subjectData, TIMESTAMP } from "./support.ts";

const DAY = 24 * 60 * 60_000;

describe("POST /v1/privacy/delete-request", () => {
  it("answers 200 with the request: string id, processed false, type DELETE, the subject as given, the reference timestamp", async () => {
    const t = await startPrivacyKit({ privacy: { processingDelayMs: DAY } });
    const response = await createRequest(t, { subjectPhone: "(914) 844-0001", requestMsg: "customer asked by email", clientUserId: "c-9", extra: 1 });
    assert.equal(response.status, 200);
    const body = t.json(response);
    assert.equal(typeof body.id, "string");
    assert.deepEqual(body, {
      id: body.id,
      processed: false,
      type: "DELETE",
      subjectPhone: PHONE,
      requestMsg: "customer asked by email",
      requestDateTime: "2026-03-01T12:00:00.000+0000",
    });
    assert.match(body.requestDateTime, TIMESTAMP);
    await t.stop();
  });

  it("answers 400 naming the fields when neither subject is given, or one is malformed, and stores nothing", async () => {
    const t = await startPrivacyKit();
    const cases: Array<[unknown, string[]]> = [
      [{}, ["subjectPhone", "subjectEmail"]],
      [{ requestMsg: "no subject", subjectPhone: "", subjectEmail: " " }, ["subjectPhone", "subjectEmail"]],
      [{ subjectPhone: "call me" }, ["subjectPhone"]],
      [{ subjectEmail: "not-an-email" }, ["subjectEmail"]],
      [{ subjectPhone: 19148440001 }, ["subjectPhone"]],
      [{ subjectEmail: EMAIL, requestMsg: "x".repeat(1001) }, ["requestMsg"]],
      [{ subjectEmail: EMAIL, clientUserId: { id: 1 } }, ["clientUserId"]],
      [[{ subjectEmail: EMAIL }], ["body"]],
    ];
    for (const [body, paths] of cases) {
      const response = await createRequest(t, body);
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.deepEqual(t.json(response).error.details.map((d: { path: string }) => d.path), paths, response.body);
    }
    assert.deepEqual(await t.kit.plugin("privacy").list(t.company.companyId), []);
    assert.deepEqual(await t.kit.jobs.list({ type: "privacy.process" }), []);
    await t.stop();
  });

  it("needs the privacy_requests:write scope (403) and a v1 token (401)", async () => {
    const t = await startPrivacyKit();
    const accounts = t.kit.plugin("accounts");
    const application = await accounts.createApplication({ companyId: t.company.companyId, name: "Reader", scopes: ["privacy_requests:read"] });
    const { token } = await accounts.issueCredential({ companyId: t.company.companyId, kind: "api_key", applicationId: application.id });
    assert.equal((await createRequest(t, { subjectEmail: EMAIL }, token)).status, 403);
    assert.equal((await createRequest(t, { subjectEmail: EMAIL }, t.company.legacyToken)).status, 401);
    assert.equal((await createRequest(t, { subjectEmail: EMAIL }, null)).status, 401);
    assert.deepEqual(await t.kit.plugin("privacy").list(t.company.companyId), []);
    await t.stop();
  });
});

describe("privacy routes and rate limits", () => {
  it("answer 429 with Retry-After beyond the token's budget, and carry the budget headers", async () => {
    const t = await startPrivacyKit({ config: { rateLimits: { default: 2 } } });
    const first = await createRequest(t, { subjectEmail: EMAIL });
    assert.equal(first.headers["x-ratelimit-limit"], "2");
    await fetchRequest(t, t.json(first).id);
    const limited = await createRequest(t, { subjectEmail: EMAIL });
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers["retry-after"]) >= 1);
    assert.equal((await fetchRequest(t, t.json(first).id)).status, 429);
    assert.equal((await t.kit.plugin("privacy").list(t.company.companyId)).length, 1, "the refused request is not stored");
    await t.clock.advance(1_000);
    assert.equal((await fetchRequest(t, t.json(first).id)).status, 200);
    await t.stop();
  });
});

describe("GET /v1/privacy/delete-request/{id}", () => {
  it("answers every field with the subject masked, and the processing times once processed", async () => {
    const t = await startPrivacyKit({ privacy: { processingDelayMs: 3 * DAY } });
    const created = t.json(await createRequest(t, { subjectPhone: PHONE, subjectEmail: "Ada@Example.com", requestMsg: "GDPR art. 17" }));
    const pending = await fetchRequest(t, created.id);
    assert.equal(pending.status, 200);
    assert.deepEqual(t.json(pending), {
      id: created.id,
      processed: false,
      type: "DELETE",
      subjectPhone: "+*****0001",
      subjectEmail: "a**@example.com",
      requestMsg: "GDPR art. 17",
      requestDateTime: "2026-03-01T12:00:00.000+0000",
    });
    await t.scheduler.advance(3 * DAY - 1);
    assert.equal(t.json(await fetchRequest(t, created.id)).processed, false, "not before the configured delay");
    await t.scheduler.advance(1);
    const done = t.json(await fetchRequest(t, created.id));
    assert.equal(done.processed, true);
    assert.equal(done.processingStartDateTime, "2026-03-04T12:00:00.000+0000");
    assert.equal(done.processingEndDateTime, "2026-03-04T12:00:00.000+0000");
    assert.equal(done.subjectPhone, "+*****0001");
    assert.equal(done.subjectEmail, "a**@example.com");
    await t.stop();
  });

  it("needs privacy_requests:read, and answers 404 for another company's id or an unknown one", async () => {
    const t = await startPrivacyKit();
    const created = t.json(await createRequest(t, { subjectEmail: EMAIL }));
    const other = await t.kit.provisionCompany({ name: "Other" });
    const otherKey = other.output.apiKey as string;
    assert.equal((await fetchRequest(t, created.id, otherKey)).status, 404);
    const theirs = t.json(await createRequest(t, { subjectEmail: EMAIL }, otherKey));
    assert.equal((await fetchRequest(t, theirs.id)).status, 404);
    assert.equal((await fetchRequest(t, "2")).status, 404, "their integer id is not ours either");
    assert.equal((await fetchRequest(t, "1")).status, 200, "our integer id");
    assert.equal((await fetchRequest(t, "no-such-id")).status, 404);
    const accounts = t.kit.plugin("accounts");
    const application = await accounts.createApplication({ companyId: t.company.companyId, name: "Writer", scopes: ["privacy_requests:write"] });
    const { token } = await accounts.issueCredential({ companyId: t.company.companyId, kind: "api_key", applicationId: application.id });
    assert.equal((await fetchRequest(t, created.id, token)).status, 403);
    assert.equal((await fetchRequest(t, created.id, t.company.legacyToken)).status, 401);
    await t.stop();
  });
});

describe("privacy processing", () => {
  it("deletes everything about the subject at that company only (subscriptions, texts, the profile with its identifiers, attributes and events), then keeps the request with the subject masked", async () => {
    const t = await startPrivacyKit();
    const other = await t.kit.provisionCompany({ name: "Other" });
    await seedSubject(t, t.company.legacyToken);
    await seedSubject(t, other.output.legacyToken as string);
    await t.request({ method: "POST", url: "/1/add-subscribers", body: { phone: "+19148440002" }, token: t.company.legacyToken });
    for (const token of [t.company.apiKey, other.output.apiKey as string]) {
      const optIn = { user: { phone: PHONE }, locale: "en-US", subscriptionType: "TRANSACTIONAL", singleOptIn: true };
      await t.request({ method: "POST", url: "/v1/subscriptions", body: optIn, token }); // a job whose payload names the phone
    }
    await t.scheduler.flush();
    const seeded = { subscriber: true, subscriptions: 2, changes: 2, signUps: 1, messages: 4 };
    assert.deepEqual(await subjectData(t, t.company.companyId), seeded);
    // The subject's profile (phone, email, clientUserId, an attribute, two events), another person's, and the other company's.
    await seedProfile(t, t.company.companyId, { phone: PHONE, email: EMAIL, clientUserId: "c-9" });
    await seedProfile(t, t.company.companyId, { phone: "+19148440002" });
    await seedProfile(t, other.company.id, { phone: PHONE, email: EMAIL, clientUserId: "c-9" });
    assert.deepEqual(await profileRecords(t, t.company.companyId), { profiles: 2, identifiers: 4, attributes: 2, events: 4 });
    const otherProfiles = await profileRecords(t, other.company.id);
    const processed: string[] = [];
    t.kit.events.on("privacy.request.processed", (event) => void processed.push(event.requestId));

    const created = t.json(await createRequest(t, { subjectPhone: PHONE, subjectEmail: EMAIL, clientUserId: "c-9" }));
    await t.scheduler.flush();

    assert.deepEqual(await subjectData(t, t.company.companyId), { subscriber: false, subscriptions: 0, changes: 0, signUps: 0, messages: 0 });
    assert.deepEqual(await subjectData(t, other.company.id), seeded, "the other company keeps its data");
    assert.deepEqual(await profileRecords(t, t.company.companyId), { profiles: 1, identifiers: 1, attributes: 1, events: 2 }, "the other person's profile stays");
    assert.equal(await t.kit.plugin("profiles").find(t.company.companyId, { kind: "clientUserId", value: "c-9" }), undefined, "no identifier of the subject is left");
    assert.deepEqual(await profileRecords(t, other.company.id), otherProfiles, "the other company keeps its profiles");
    const mentions = (text: string) => text.includes(PHONE) || text.includes(EMAIL);
    assert.deepEqual((await t.kit.jobs.list({ companyId: t.company.companyId })).filter((job) => mentions(JSON.stringify(job.payload))), [], "no job payload names the subject");
    assert.ok((await t.kit.jobs.list({ companyId: other.company.id })).some((job) => mentions(JSON.stringify(job.payload))), "the other company's jobs do");
    assert.ok(await t.kit.plugin("subscriptions").findSubscriber(t.company.companyId, { phone: "+19148440002" }), "another subscriber stays");
    assert.deepEqual(processed, [created.id]);
    const stored = (await t.kit.plugin("privacy").get(t.company.companyId, created.id)) as PrivacyRequest;
    assert.deepEqual(
      { phone: stored.subjectPhone, email: stored.subjectEmail, clientUserId: stored.clientUserId, subjects: stored.subjects, processed: stored.processed },
      { phone: "+*****0001", email: "a**@example.com", clientUserId: undefined, subjects: undefined, processed: true },
      "only masked subject data is kept",
    );
    // The hidden digits of +19148440001 (ids and timestamps may hold "844" by chance).
    assert.ok(!JSON.stringify(stored).includes("914844"), "no digits of the phone beyond the last four");
    // 1 subscriber, 2 subscriptions, 2 changes, 1 sign-up, 1 opt-in job, 4 messages; 1 profile, 3 identifiers, 1 attribute, 2 events
    assert.equal(stored.removedRecords, 18);
    await t.stop();
  });

  it("given only the email, also deletes what is stored under the phone of the subscriber holding it, and the whole profile", async () => {
    const t = await startPrivacyKit();
    await seedSubject(t, t.company.legacyToken);
    await seedProfile(t, t.company.companyId, { phone: PHONE, email: EMAIL });
    await createRequest(t, { subjectEmail: "ADA@example.com" });
    await t.scheduler.flush();
    assert.deepEqual(await subjectData(t, t.company.companyId), { subscriber: false, subscriptions: 0, changes: 0, signUps: 0, messages: 0 });
    assert.deepEqual(await profileRecords(t, t.company.companyId), { profiles: 0, identifiers: 0, attributes: 0, events: 0 });
    await t.stop();
  });

  it("deletes the emails the outbox keeps for the subject's address, and no one else's", async () => {
    const t = await startPrivacyKit();
    await seedSubject(t, t.company.legacyToken);
    for (const to of [EMAIL, "bob@example.com"]) {
      await t.kit.outbox.sendEmail({ companyId: t.company.companyId, to, subject: "Your receipt", text: "Thank you", kind: "transactional" });
    }
    await t.scheduler.flush();
    await createRequest(t, { subjectEmail: EMAIL });
    await t.scheduler.flush();
    assert.deepEqual(
      (await t.kit.outbox.list({ companyId: t.company.companyId })).map((message) => message.to),
      ["bob@example.com"],
    );
    await t.stop();
  });

  it("is at once by default, never later than thirty days", async () => {
    assert.throws(() => privacyPlugin({ processingDelayMs: MAX_PROCESSING_DELAY_MS + 1 }), /thirty days/);
    assert.throws(() => privacyPlugin({ processingDelayMs: -1 }), RangeError);
    const t = await startPrivacyKit({ privacy: { processingDelayMs: MAX_PROCESSING_DELAY_MS } });
    const created = t.json(await createRequest(t, { subjectPhone: PHONE }));
    await t.scheduler.advance(MAX_PROCESSING_DELAY_MS);
    assert.equal(t.json(await fetchRequest(t, created.id)).processed, true);
    await t.stop();
  });
});
