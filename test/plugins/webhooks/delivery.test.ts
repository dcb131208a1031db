import assert from "node:assert/strict";
import { after, afterEach, describe, it } from "node:test";
import { AsyncLocalStorage } from "node:async_hooks";
import { Webhook } from "standardwebhooks";
import { memoryStorage } from "../../../adapters/storage/memory/index.ts";
import { fakeClock } from "../../../adapters/clock/index.ts";
import { DELIVER_JOB, DELIVERIES, externalId, MAX_DELIVERY_ATTEMPTS, type DeliveryRecord } from "../../../plugins/webhooks/index.ts";
import { withCollectionMethod, wrapStorage } from "../../support/storage-wrappers.ts";
import type { Json } from "../../support/test-kit.ts";
import { Receiver, singleOptIn, startWebhookKit, type WebhookKit } from "./support.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let t: WebhookKit | undefined;
const receivers: Receiver[] = [];
afterEach(async () => {
  await t?.stop();
  t = undefined;
  for (const receiver of receivers.splice(0)) await receiver.close();
});

async function receiver(key?: string): Promise<Receiver> {
  const started = await Receiver.start(key);
  receivers.push(started);
  return started;
}

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
    assert.deepEqual([delivery.status, delivery.attempts, delivery.nextAttemptAt], ["failed", MAX_DELIVERY_ATTEMPTS, undefined]);
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

describe("an event's deliveries share one job", () => {
  const deliverJobs = (kit: WebhookKit) => kit.kit.jobs.list({ type: DELIVER_JOB });
  /** Answers once `first` has answered its first request: the kit gets that answer first. */
  const answerAfter = (first: Receiver) => async () => {
    while (first.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 100));
    return { status: 200 };
  };

  it("one job attempts every webhook of an event; a receiver that fails is retried alone, by a job of its own, on the schedule", async () => {
    t = await startWebhookKit();
    const first = await receiver(t.signingKey);
    const second = await receiver(t.signingKey);
    const failing = await receiver(t.signingKey);
    const answers = [500, 200];
    failing.answer = () => ({ status: answers.shift()! });
    first.answer = second.answer = answerAfter(failing);
    for (const each of [first, second, failing]) await t.createWebhook(each.url, ["sms.subscribed"]);
    await t.request({ method: "POST", url: "/v1/subscriptions", body: singleOptIn("+19148440021") });
    await t.scheduler.flush();
    assert.deepEqual([first.requests.length, second.requests.length, failing.requests.length], [1, 1, 1]);
    const jobs = await deliverJobs(t);
    assert.equal(jobs.length, 2);
    const eventJob = jobs.find((job) => (job.payload as { deliveryIds: string[] }).deliveryIds.length > 1);
    const retryJob = jobs.find((job) => job !== eventJob);
    assert.equal(eventJob!.status, "done");
    assert.equal((eventJob!.payload as { deliveryIds: string[] }).deliveryIds.length, 3);
    const retried = (await t.deliveries()).find((delivery) => delivery.status === "pending")!;
    assert.deepEqual(retryJob!.payload, { deliveryIds: [retried.id] });
    assert.deepEqual([retryJob!.status, retryJob!.runAt], ["queued", retried.nextAttemptAt]);
    assert.equal(retried.webhookId, (await t.deliveries()).find((delivery) => delivery.responseStatus === 500)!.webhookId);
    await t.scheduler.advance(12_001);
    assert.deepEqual([first.requests.length, second.requests.length, failing.requests.length], [1, 1, 2]);
    assert.equal(failing.requests[1]!.headers["webhook-id"], failing.requests[0]!.headers["webhook-id"]);
    assert.deepEqual((await t.deliveries()).map((delivery) => `${delivery.status} ${delivery.attempts}`).sort(), ["delivered 1", "delivered 1", "delivered 2"]);
  });

  it("an event's job run again (killed before its done mark) sends neither a delivered delivery nor one handed to a job of its own", async () => {
    t = await startWebhookKit();
    const healthy = await receiver(t.signingKey);
    const failing = await receiver(t.signingKey);
    failing.answer = () => ({ status: 503 });
    healthy.answer = answerAfter(failing);
    for (const each of [healthy, failing]) await t.createWebhook(each.url, ["sms.subscribed"]);
    await t.request({ method: "POST", url: "/v1/subscriptions", body: singleOptIn("+19148440022") });
    await t.scheduler.flush();
    const eventJob = (await deliverJobs(t)).find((job) => (job.payload as { deliveryIds: string[] }).deliveryIds.length === 2);
    // What a restart after a kill -9 does to a job whose done mark never committed: it runs again with its payload.
    await t.kit.jobs.enqueue({ type: DELIVER_JOB, payload: eventJob!.payload });
    await t.scheduler.flush();
    assert.deepEqual([healthy.requests.length, failing.requests.length], [1, 1]);
    await t.scheduler.advance(12_001);
    assert.deepEqual([healthy.requests.length, failing.requests.length], [1, 2]);
  });

  it("an outcome whose commit fails keeps the event's job open though another of its outcomes commits after: its delivery is attempted again", async () => {
    const storage = memoryStorage();
    const inTransaction = new AsyncLocalStorage<boolean>();
    let failingDelivery: string | undefined;
    let commitFailed = false;
    // The first delivered outcome's transaction fails as its commit would: everything it wrote is undone.
    const failing = withCollectionMethod(storage, "update", (update, collection) => async (id, patch, options) => {
      if (collection === DELIVERIES && (patch as Partial<DeliveryRecord>).status === "delivered" && failingDelivery === undefined) failingDelivery = id;
      return update(id, patch, options);
    });
    t = await startWebhookKit({
      storage: wrapStorage(failing, {
        transaction: (fn) =>
          inTransaction.getStore()
            ? failing.transaction(fn)
            : failing.transaction(() =>
                inTransaction.run(true, async () => {
                  const result = await fn();
                  if (failingDelivery !== undefined && !commitFailed) {
                    commitFailed = true;
                    throw new Error("the commit failed");
                  }
                  return result;
                }),
              ),
      }),
    });
    const first = await receiver(t.signingKey);
    const second = await receiver(t.signingKey);
    second.answer = async () => {
      while (!commitFailed) await new Promise((resolve) => setTimeout(resolve, 10));
      return { status: 200 };
    };
    for (const each of [first, second]) await t.createWebhook(each.url, ["sms.subscribed"]);
    await t.request({ method: "POST", url: "/v1/subscriptions", body: singleOptIn("+19148440023") });
    await t.scheduler.flush();
    assert.ok(commitFailed);
    assert.deepEqual([first.requests.length, second.requests.length], [1, 1]);
    await t.scheduler.advance(60_000);
    assert.deepEqual([first.requests.length, second.requests.length], [2, 1]);
    assert.deepEqual((await t.deliveries()).map((delivery) => delivery.status), ["delivered", "delivered"]);
    assert.deepEqual((await deliverJobs(t)).map((job) => job.status), ["done"]);
  });
});

after(async () => {
  for (const receiver of receivers) await receiver.close();
});
