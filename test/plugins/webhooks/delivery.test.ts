import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Webhook } from "standardwebhooks";
import { memoryStorage } from "../../../adapters/storage/memory/index.ts";
import { fakeClock } from "../../../adapters/clock/index.ts";
import { join } from "node:path";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import { DELIVER_JOB, DELIVERIES, DRAIN_JOB, externalId, MAX_DELIVERY_ATTEMPTS, type DeliveryRecord } from "../../../plugins/webhooks/index.ts";
import { JOBS_COLLECTION, jobsCollection } from "../../../src/jobs/job-record.ts";
import { OUTCOME_PAGES, webhookCollections, type OutcomePage } from "../../../plugins/webhooks/records.ts";
import { deliveriesDueInRowsOfTheirOwn, firstAttemptsAfterCursors } from "../../../plugins/webhooks/migrations.ts";
import { MIGRATIONS_COLLECTION, migrationsCollection } from "../../../src/kernel/migrations.ts";
import type { JobRecord } from "../../../src/index.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";
import { withCollectionMethod } from "../../support/storage-wrappers.ts";
import type { Json } from "../../support/test-kit.ts";
import { pagedIds, receiversClosedAfterEach, singleOptIn, startWebhookKit, type Receiver, type WebhookKit } from "./support.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let t: WebhookKit | undefined;
const receiver = receiversClosedAfterEach(async () => {
  await t?.stop();
  t = undefined;
});

async function optIn(kit: WebhookKit, phone: string, extra: Json = {}) {
  const answer = await kit.request({ method: "POST", url: "/v1/subscriptions", body: singleOptIn(phone, extra) });
  assert.equal(answer.status, 202, answer.body);
  await kit.scheduler.flush();
}

describe("webhook deliveries", () => {
  it("sends sms.subscribed in the reference's shape to a receiver that checks the hex HMAC as the demo app does", async () => {
    t = await startWebhookKit();
    const demo = await receiver(t.signingKey);
    await t.createWebhook(demo.url, ["sms.subscribed"]);
    await optIn(t, "+19148440001", { email: "ada@example.com" });
    assert.equal(demo.requests.length, 1);
    const [request] = demo.requests;
    assert.ok(demo.hmacMatches(request!), "the demo app accepts the signature");
    assert.equal(request!.headers["content-type"], "application/json");
    const subscriber = (await t.kit.plugin("subscriptions").findSubscriber(t.company.companyId, { phone: "+19148440001" }))!;
    assert.deepEqual(request!.json, {
      type: "sms.subscribed",
      timestamp: t.clock.now(),
      company: { display_name: "Acme", company_id: t.company.companyId },
      subscriber: {
        external_id: externalId(subscriber.id),
        phone: "+19148440001",
        email: "ada@example.com",
        external_identifiers: { client_user_id: [], custom_identifiers: {} },
      },
      subscription: { type: "MARKETING", channel: "TEXT" },
    });
    const [delivery] = await t.deliveries();
    assert.equal(delivery!.id, request!.headers["webhook-id"]);
    assert.deepEqual([delivery!.status, delivery!.attempts, delivery!.responseStatus, delivery!.responseBody], ["delivered", 1, 200, '{"status":"success"}']);
    assert.ok(typeof delivery!.latencyMs === "number");
  });

  it("signs with Standard Webhooks headers that the standardwebhooks library verifies, and a tampered body fails it", async () => {
    // The library checks webhook-timestamp against the real time.
    t = await startWebhookKit({ clock: fakeClock(Date.now()) });
    const receiving = await receiver(t.signingKey);
    await t.createWebhook(receiving.url, ["email.subscribed"]);
    await optIn(t, "+19148440002", { email: "grace@example.com" });
    const request = receiving.requests.find((r) => r.json.type === "email.subscribed")!;
    const headers = request.headers as Record<string, string>;
    const verified = new Webhook(t.signingKey).verify(request.body, headers) as Json;
    assert.equal(verified.subscriber.email, "grace@example.com");
    assert.throws(() => new Webhook(t!.signingKey).verify(request.body.replace("grace", "eve"), headers));
    assert.match(headers["webhook-id"]!, /^msg_/);
  });

  it("retries timeouts, 5xx and refused connections with the same webhook-id and body on the schedule, then delivers", async () => {
    t = await startWebhookKit({ webhooks: { attemptTimeoutMs: 300 } });
    const flaky = await receiver(t.signingKey);
    const answers: Array<"hang" | number> = [500, "hang", 503, 200];
    flaky.answer = async () => {
      const next = answers.shift()!;
      if (next === "hang") await new Promise((resolve) => setTimeout(resolve, 2_000));
      return { status: next === "hang" ? 200 : next };
    };
    await t.createWebhook(flaky.url, ["sms.subscribed"]);
    await optIn(t, "+19148440003");
    const afterFirst = (await t.deliveries())[0]!;
    assert.deepEqual([afterFirst.status, afterFirst.attempts, afterFirst.responseStatus, afterFirst.error], ["pending", 1, 500, "the receiver answered 500"]);
    // The second attempt comes 10 s (±20%) later, not before 8 s.
    await t.scheduler.advance(7_999);
    assert.equal(flaky.requests.length, 1);
    await t.scheduler.advance(4_001);
    assert.equal(flaky.requests.length, 2);
    assert.match((await t.deliveries())[0]!.error!, /no answer within 300 ms/);
    await t.scheduler.advance(61_000);
    await t.scheduler.advance(301_000);
    const done = (await t.deliveries())[0]!;
    assert.deepEqual([done.status, done.attempts, done.responseStatus], ["delivered", 4, 200]);
    assert.equal(new Set(flaky.requests.map((r) => r.headers["webhook-id"])).size, 1, "one webhook-id on every attempt");
    assert.equal(new Set(flaky.requests.map((r) => r.body)).size, 1, "the same body on every attempt");
  });

  it("gives up after the last attempt of the schedule, about a day after the first", async () => {
    t = await startWebhookKit();
    const down = await receiver(t.signingKey);
    down.answer = () => ({ status: 502 });
    await t.createWebhook(down.url, ["sms.subscribed"]);
    await optIn(t, "+19148440004");
    await t.scheduler.advance(20 * HOUR);
    assert.ok(down.requests.length < MAX_DELIVERY_ATTEMPTS);
    await t.scheduler.advance(12 * HOUR);
    assert.equal(down.requests.length, MAX_DELIVERY_ATTEMPTS);
    const delivery = (await t.deliveries())[0]!;
    assert.deepEqual([delivery.status, delivery.attempts, delivery.dueAt], ["failed", MAX_DELIVERY_ATTEMPTS, undefined]);
    await t.scheduler.advance(7 * DAY);
    assert.equal(down.requests.length, MAX_DELIVERY_ATTEMPTS);
  });

  it("disables a webhook that answers 410, and PUT disabled:false enables it again", async () => {
    t = await startWebhookKit();
    const gone = await receiver(t.signingKey);
    gone.answer = () => ({ status: 410 });
    const webhook = await t.createWebhook(gone.url, ["sms.subscribed"]);
    await optIn(t, "+19148440005");
    const listed = t.json(await t.request({ url: "/v1/webhooks" })).webhooks[0];
    assert.equal(listed.disabledAt, "2026-03-01 12:00:00");
    assert.equal((await t.deliveries())[0]!.status, "failed");
    await optIn(t, "+19148440006");
    assert.equal(gone.requests.length, 1, "nothing goes to a disabled webhook");
    gone.answer = undefined;
    assert.equal((await t.request({ method: "PUT", url: `/v1/webhooks/${webhook.id}`, body: { disabled: false } })).status, 200);
    await optIn(t, "+19148440007");
    assert.equal(gone.requests.length, 2);
    assert.equal(gone.requests[1]!.json.subscriber.phone, "+19148440007");
  });

  it("disables a webhook whose every attempt failed for five days, with a log line", async () => {
    const warnings: Array<{ message: string; fields: Json }> = [];
    t = await startWebhookKit();
    t.kit.logger.warn = (message, fields) => void warnings.push({ message, fields });
    const down = await receiver(t.signingKey);
    down.answer = () => ({ status: 500 });
    await t.createWebhook(down.url, ["sms.subscribed"]);
    const listed = async () => t!.json(await t!.request({ url: "/v1/webhooks" })).webhooks[0];
    for (let day = 0; day < 6; day++) {
      // Still enabled after four days of failures: the limit is five.
      if (day === 5) assert.equal((await listed()).disabledAt, null);
      await optIn(t, `+1914844100${day}`);
      await t.scheduler.advance(DAY);
    }
    assert.equal((await listed()).disabledAt, "2026-03-06 12:00:00");
    assert.ok(warnings.some((w) => w.message === "webhook disabled" && /every attempt failed since 2026-03-01T12:00:00.000Z/.test(w.fields.reason)), JSON.stringify(warnings));
  });

  it("keeps finished deliveries in the log for 30 days: a daily job deletes older ones", async () => {
    t = await startWebhookKit();
    const receiving = await receiver(t.signingKey);
    await t.createWebhook(receiving.url, ["sms.subscribed"]);
    await optIn(t, "+19148440008");
    await t.scheduler.advance(20 * DAY);
    await optIn(t, "+19148440009");
    await t.scheduler.advance(11 * DAY);
    assert.deepEqual((await t.deliveries()).map((delivery) => JSON.parse(delivery.body).subscriber.phone), ["+19148440009"]);
    await t.scheduler.advance(20 * DAY);
    assert.deepEqual(await t.deliveries(), []);
  });
});

describe("a webhook's drain", () => {
  const drainJobs = (kit: WebhookKit) => kit.kit.jobs.list({ type: DRAIN_JOB });
  const webhookIds = (received: Receiver) => received.requests.map((request) => String(request.headers["webhook-id"]));

  it("sends a receiver's deliveries in the order of their events, one drain job for them all and none per delivery; a failed one goes again at its scheduled time", async () => {
    t = await startWebhookKit({ webhooks: { concurrencyPerReceiver: 1 } });
    const receiving = await receiver(t.signingKey);
    const answers = [500];
    receiving.answer = () => ({ status: answers.shift() ?? 200 });
    const webhook = await t.createWebhook(receiving.url, ["sms.subscribed"]);
    for (let i = 0; i < 4; i++) await t.request({ method: "POST", url: "/v1/subscriptions", body: singleOptIn(`+1914844003${i}`) });
    await t.scheduler.flush();
    const ids = (await t.deliveries()).map((delivery) => delivery.id);
    assert.equal(ids.length, 4);
    assert.deepEqual(webhookIds(receiving), ids, "in the order of their events");
    assert.deepEqual(await t.kit.jobs.list({ type: DELIVER_JOB }), [], "no job per delivery");
    const retried = (await t.deliveries())[0]!;
    assert.deepEqual([retried.status, retried.attempts, retried.responseStatus], ["pending", 1, 500]);
    // The drain that sent the four, and the next, queued for the retry.
    const key = `webhook-drain:${webhook.id}`;
    assert.deepEqual((await drainJobs(t)).map((job) => [job.key, job.status, job.status === "queued" ? job.runAt : "ran"]), [[key, "done", "ran"], [key, "queued", retried.dueAt]]);
    // The schedule's first delay: 10 s, stretched or shrunk by up to a fifth.
    await t.scheduler.advance(7_999);
    assert.equal(receiving.requests.length, 4);
    await t.scheduler.advance(4_001);
    assert.deepEqual(webhookIds(receiving), [...ids, ids[0]], "the same webhook-id again");
    assert.deepEqual((await t.deliveries()).map((delivery) => `${delivery.status} ${delivery.attempts}`), ["delivered 2", "delivered 1", "delivered 1", "delivered 1"]);
  });

  it("writes nothing before a request leaves: while the receiver holds it, the delivery's row is as it was queued; its outcome is its one write", async () => {
    const kit = (t = await startWebhookKit());
    const receiving = await receiver(kit.signingKey);
    // An in-flight mark, as an earlier version wrote one: none may be written now.
    let whileOut: Array<DeliveryRecord & { inFlightSince?: number }> = [];
    receiving.answer = async () => {
      whileOut = await kit.deliveries();
      return { status: 200 };
    };
    await t.createWebhook(receiving.url, ["sms.subscribed"]);
    await t.request({ method: "POST", url: "/v1/subscriptions", body: singleOptIn("+19148440040") });
    await t.scheduler.flush();
    // Due from when it was recorded, never touched since.
    assert.deepEqual(
      whileOut.map((delivery) => [delivery.status, delivery.attempts, delivery.dueAt === delivery.createdAt, delivery.updatedAt === delivery.createdAt, delivery.inFlightSince]),
      [["pending", 0, true, true, undefined]],
    );
    const [delivered]: Array<DeliveryRecord & { inFlightSince?: number }> = await t.deliveries();
    assert.deepEqual([delivered?.status, delivered?.attempts, delivered?.dueAt, delivered?.inFlightSince], ["delivered", 1, undefined, undefined]);
  });

  it("two processes on one database never send one delivery twice, nor two of a receiver at once beyond its limit", async () => {
    const storage = memoryStorage();
    const clock = fakeClock("2026-03-01T12:00:00.000Z");
    const config = { jobs: { pollMs: 1_000 } };
    t = await startWebhookKit({ storage, clock, config, webhooks: { concurrencyPerReceiver: 1 } });
    const other = await startWebhookKit({ storage, clock, config, bare: true, webhooks: { concurrencyPerReceiver: 1 } });
    try {
      const receiving = await receiver(t.signingKey);
      let out = 0;
      let overlaps = 0;
      receiving.answer = async () => {
        if (++out > 1) overlaps++;
        await new Promise((resolve) => setTimeout(resolve, 5));
        out--;
        return { status: 200 };
      };
      await t.createWebhook(receiving.url, ["sms.subscribed"]);
      for (let round = 0; round < 3; round++) {
        for (let i = 0; i < 4; i++) {
          const kit: WebhookKit = i % 2 === 0 ? t : other;
          assert.equal((await kit.request({ method: "POST", url: "/v1/subscriptions", body: singleOptIn(`+19148441${round}${i}0`), token: t.company.apiKey })).status, 202);
        }
        const [first, second] = round % 2 === 0 ? [t, other] : [other, t];
        await Promise.all([first.scheduler.advance(1_000), second.scheduler.advance(1_000)]);
      }
      for (let poll = 0; poll < 5; poll++) await Promise.all([t.scheduler.advance(1_000), other.scheduler.advance(1_000)]);
      const ids = (await t.deliveries()).map((delivery) => delivery.id);
      assert.equal(ids.length, 12);
      assert.deepEqual([...webhookIds(receiving)].sort(), ids, "each once");
      assert.equal(overlaps, 0, "one request at a time, as its limit says, across both processes");
    } finally {
      await other.stop();
    }
  });

  it("sends a delivery whose job was queued before the drains (an older database), once", async () => {
    const filename = join(temporaryDirectory("webhooks-upgrade"), "reachkit.db");
    const clock = fakeClock("2026-03-01T12:00:00.000Z");
    t = await startWebhookKit({ storage: sqliteStorage({ filename }), clock });
    const receiving = await receiver(t.signingKey);
    receiving.answer = () => ({ status: 200 });
    const webhook = await t.createWebhook(receiving.url, ["sms.subscribed"]);
    const applicationId = (await t.kit.plugin("accounts").listApplications(t.company.companyId))[0]!.id;
    await t.stop();
    // A delivery and its job as an earlier version wrote them: a next attempt's time, no dueAt; and one delivered already.
    // That version had not run the migration of deliveries' queue state into rows of their own.
    const before = sqliteStorage({ filename });
    await before.ensureCollections([jobsCollection, migrationsCollection, ...webhookCollections]);
    for (const migration of [deliveriesDueInRowsOfTheirOwn, firstAttemptsAfterCursors]) assert.equal(await before.collection(MIGRATIONS_COLLECTION).delete(`webhooks:${migration.id}`), true);
    const now = clock.now();
    const old = (id: string, status: DeliveryRecord["status"]) => ({
      id, webhookId: webhook.id, companyId: t!.company.companyId, applicationId, event: "sms.subscribed", body: `{"old":"${id}"}`, status, attempts: 0, nextAttemptAt: now, createdAt: now, updatedAt: now,
    });
    await before.collection(DELIVERIES).insert(old("msg_old_pending", "pending"));
    await before.collection(DELIVERIES).insert(old("msg_old_delivered", "delivered"));
    const job = (id: string, deliveryIds: string[]): JobRecord => ({
      id, type: DELIVER_JOB, lane: DELIVER_JOB, key: null, activeKey: null, companyId: t!.company.companyId, payload: { deliveryIds }, status: "queued",
      runAt: now, attempts: 0, maxAttempts: 5, leaseUntil: null, lastError: null, createdAt: now, updatedAt: now, finishedAt: null,
    });
    await before.collection<JobRecord>(JOBS_COLLECTION).insert(job("j1", ["msg_old_pending"]));
    await before.collection<JobRecord>(JOBS_COLLECTION).insert(job("j2", ["msg_old_delivered"]));
    await before.close?.();

    t = await startWebhookKit({ storage: sqliteStorage({ filename }), clock, bare: true });
    await t.scheduler.flush();
    assert.deepEqual(webhookIds(receiving), ["msg_old_pending"]);
    assert.deepEqual((await t.deliveries()).map((delivery) => `${delivery.id} ${delivery.status}`), ["msg_old_delivered delivered", "msg_old_pending delivered"]);
    assert.deepEqual((await t.kit.jobs.list({ type: DELIVER_JOB })).map((done) => done.status), ["done", "done"]);
    await t.scheduler.advance(HOUR);
    assert.equal(receiving.requests.length, 1, "once");
  });

  it("an outcome whose write fails leaves its delivery due: it is attempted again, and the outcomes written beside it stay", async () => {
    let failingDelivery: string | undefined;
    let writeFailed = false;
    let writesFail = true;
    // Until the test ends it, every write of the first delivered outcome fails, as a failed commit would: nothing of it is stored.
    // A delivered outcome is written in its webhook's outcome page.
    const outcomesIn = (docs: readonly unknown[]) => docs.flatMap((doc) => pagedIds(doc as Partial<OutcomePage>));
    const failing = withCollectionMethod(memoryStorage(), "upsertMany", (upsertMany, collection) => async (docs) => {
      if (collection !== OUTCOME_PAGES) return upsertMany(docs);
      failingDelivery ??= outcomesIn(docs)[0];
      if (writesFail && outcomesIn(docs).includes(failingDelivery!)) {
        writeFailed = true;
        throw new Error("the commit failed");
      }
      return upsertMany(docs);
    });
    t = await startWebhookKit({ storage: failing });
    const first = await receiver(t.signingKey);
    const second = await receiver(t.signingKey);
    second.answer = async () => {
      while (!writeFailed) await new Promise((resolve) => setTimeout(resolve, 10));
      return { status: 200 };
    };
    for (const each of [first, second]) await t.createWebhook(each.url, ["sms.subscribed"]);
    await t.request({ method: "POST", url: "/v1/subscriptions", body: singleOptIn("+19148440023") });
    await t.scheduler.flush();
    assert.ok(writeFailed);
    assert.deepEqual([first.requests.length, second.requests.length], [1, 1]);
    writesFail = false;
    await t.scheduler.advance(60_000);
    assert.deepEqual([first.requests.length, second.requests.length], [2, 1]);
    assert.deepEqual((await t.deliveries()).map((delivery) => delivery.status), ["delivered", "delivered"]);
    assert.deepEqual(await t.kit.jobs.list({ type: DRAIN_JOB, status: "queued" }), []);
  });
});
