import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { Webhook } from "standardwebhooks";
import { fakeClock } from "../../../adapters/clock/index.ts";
import { DELIVER_JOB, WEBHOOKS, type WebhookRecord } from "../../../plugins/webhooks/index.ts";
import type { Json } from "../../support/test-kit.ts";
import { waitUntil } from "../../support/wait.ts";
import { Receiver, singleOptIn, startWebhookKit, type WebhookKit } from "./support.ts";

const HOUR = 3_600_000;

let t: WebhookKit | undefined;
const receivers: Receiver[] = [];
afterEach(async () => {
  for (const receiver of receivers.splice(0)) {
    receiver.answer = undefined;
    await receiver.close();
  }
  await t?.stop();
  t = undefined;
});

async function receiver(key?: string): Promise<Receiver> {
  const started = await Receiver.start(key);
  receivers.push(started);
  return started;
}

const optIn = (kit: WebhookKit, phone: string) => kit.request({ method: "POST", url: "/v1/subscriptions", body: singleOptIn(phone) });
const waitFor = async (done: () => boolean) => {
  const deadline = Date.now() + 30_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

/** Webhooks to two receivers: one that answers nothing until `answerSlow()`, and a healthy one. */
async function slowAndHealthy(kit: WebhookKit) {
  const slow = await receiver(kit.signingKey);
  const healthy = await receiver(kit.signingKey);
  let answerSlow!: () => void;
  const slowAnswers = new Promise<void>((resolve) => (answerSlow = resolve));
  slow.answer = async () => {
    await slowAnswers;
    return { status: 200 };
  };
  await kit.createWebhook(slow.url, ["sms.subscribed"]);
  await kit.createWebhook(healthy.url, ["sms.subscribed"]);
  return { slow, healthy, answerSlow };
}

describe("webhook delivery: receivers and companies apart", () => {
  it("a receiver that does not answer never delays deliveries to healthy ones, nor the kit's other jobs", async () => {
    t = await startWebhookKit({ webhooks: { concurrencyPerReceiver: 2 }, config: { jobs: { concurrency: 2 } } });
    const { slow, healthy, answerSlow } = await slowAndHealthy(t);
    for (let i = 0; i < 20; i++) assert.equal((await optIn(t, `+1914844${String(2000 + i)}`)).status, 202);
    const flushing = t.scheduler.flush();
    // The slow receiver holds its two requests; the healthy one gets all twenty meanwhile,
    // and every opt-in (a job of the same runner, two slots) is processed.
    await waitFor(() => healthy.requests.length === 20);
    assert.equal(slow.requests.length, 2);
    assert.equal((await t.kit.jobs.list({ type: "subscriptions.opt-in", status: "done" })).length, 20);
    answerSlow();
    await flushing;
    await t.scheduler.advance(HOUR);
    assert.equal(slow.requests.length, 20);
    assert.equal(new Set(slow.requests.map((r) => r.headers["webhook-id"])).size, 20);
  });

  it("an event's delivery to a receiver found slow waits in a job of its own; the event's job delivers to the healthy one and ends", async () => {
    t = await startWebhookKit({ webhooks: { concurrencyPerReceiver: 1 } });
    const { slow, healthy, answerSlow } = await slowAndHealthy(t);
    // Two events fill the slow receiver's lane (one request out, one queued: twice its concurrency).
    for (const phone of ["+19148442101", "+19148442102"]) assert.equal((await optIn(t, phone)).status, 202);
    const flushing = t.scheduler.flush();
    await waitFor(() => healthy.requests.length === 2 && slow.requests.length === 1);
    // Its oldest request has waited over a second (SLOW_RECEIVER_MS), while the healthy lane has no work: it is slow.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    assert.equal((await optIn(t, "+19148442103")).status, 202);
    const ofThird = async () => (await t!.deliveries()).filter((delivery) => JSON.parse(delivery.body).subscriber.phone === "+19148442103");
    // The healthy one's outcome commits with the event job's done mark.
    await waitUntil("the third event's delivery to the healthy receiver", async () => (await ofThird()).some((delivery) => delivery.status === "delivered"));
    const third = (await ofThird()).find((delivery) => delivery.status === "pending")!;
    assert.ok(third.jobId, "handed to a job of its own");
    const ownJob = (await t.kit.jobs.get(third.jobId))!;
    assert.deepEqual([ownJob.status, ownJob.runAt, ownJob.payload], ["queued", third.nextAttemptAt, { deliveryIds: [third.id] }]);
    assert.ok(third.nextAttemptAt! > t.clock.now());
    const eventJob = (await t.kit.jobs.list({ type: DELIVER_JOB })).find((job) => job.id !== ownJob.id && (job.payload as { deliveryIds: string[] }).deliveryIds.includes(third.id))!;
    assert.equal(eventJob.status, "done");
    answerSlow();
    await flushing;
    await t.scheduler.advance(HOUR);
    assert.equal(slow.requests.length, 3);
    assert.equal(new Set(slow.requests.map((r) => r.headers["webhook-id"])).size, 3);
    assert.equal((await t.deliveries()).filter((delivery) => delivery.status === "delivered").length, 6);
  });

  it("one company's events never reach another company's webhooks", async () => {
    t = await startWebhookKit();
    const mine = await receiver(t.signingKey);
    await t.createWebhook(mine.url, ["sms.subscribed"]);
    const other = await t.kit.provisionCompany({ name: "Globex" });
    const theirs = await receiver((other.output as Json).webhookSigningKey);
    await t.createWebhook(theirs.url, ["sms.subscribed"], (other.output as Json).apiKey);
    await optIn(t, "+19148440001");
    await t.request({ method: "POST", url: "/v1/subscriptions", body: singleOptIn("+19148440002"), token: (other.output as Json).apiKey });
    await t.scheduler.flush();
    assert.deepEqual(mine.requests.map((r) => [r.json.subscriber.phone, r.json.company.company_id]), [["+19148440001", t.company.companyId]]);
    assert.deepEqual(theirs.requests.map((r) => [r.json.subscriber.phone, r.json.company.company_id]), [["+19148440002", other.company.id]]);
    assert.ok(theirs.hmacMatches(theirs.requests[0]!), "signed with the other company's application key");
  });

  it("a rotated key signs beside the new one for the overlap, then the new one alone", async () => {
    t = await startWebhookKit({ clock: fakeClock(Date.now()) });
    const receiving = await receiver(t.signingKey);
    await t.createWebhook(receiving.url, ["sms.subscribed"]);
    const applicationId = (await t.kit.plugin("accounts").listApplications(t.company.companyId))[0]!.id;
    // A short overlap: the library refuses a webhook-timestamp more than five minutes from the real time.
    const { key } = await t.kit.plugin("webhooks").signingKeys.rotate(applicationId, 60_000);
    await optIn(t, "+19148440001");
    await t.scheduler.flush();
    const during = receiving.requests[0]!;
    assert.equal(String(during.headers["webhook-signature"]).split(" ").length, 2);
    for (const signing of [key, t.signingKey]) new Webhook(signing).verify(during.body, during.headers as Record<string, string>);
    assert.ok(receiving.hmacMatches(during), "the reference's header keeps the key of before the rotation for the overlap");
    t.clock.advance(60_000);
    await optIn(t, "+19148440002");
    await t.scheduler.flush();
    const later = receiving.requests[1]!;
    assert.equal(String(later.headers["webhook-signature"]).split(" ").length, 1);
    new Webhook(key).verify(later.body, later.headers as Record<string, string>);
    receiving.signingKey = key;
    assert.ok(receiving.hmacMatches(later), "then the new key");
    assert.throws(() => new Webhook(t!.signingKey).verify(later.body, later.headers as Record<string, string>));
  });
});

describe("webhook delivery: private targets refused by default", () => {
  it("refuses 127.0.0.1 and a name that resolves to it at connect time: no request reaches the receiver", async () => {
    t = await startWebhookKit({ webhooks: { allowPrivateTargets: false } });
    const local = await receiver(t.signingKey);
    assert.equal((await t.request({ method: "POST", url: "/v1/webhooks", body: { url: local.url, events: ["sms.subscribed"] } })).status, 400);
    // Webhooks whose targets turned private after they were made (a DNS change, a rebinding name):
    // written as the registry would have, with a literal address and with a name.
    const webhooks = t.kit.storage.collection<WebhookRecord>(WEBHOOKS);
    const applicationId = (await t.kit.plugin("accounts").listApplications(t.company.companyId))[0]!.id;
    const port = new URL(local.url).port;
    for (const [id, host] of [["literal", "127.0.0.1"], ["named", "localhost"]] as const) {
      await webhooks.insert({ id, companyId: t.company.companyId, applicationId, credentialKind: "api_key", url: `http://${host}:${port}/hooks`, events: ["sms.subscribed"], createdAt: 0, updatedAt: 0 });
    }
    await optIn(t, "+19148440001");
    await t.scheduler.flush();
    assert.equal(local.requests.length, 0);
    const errors = Object.fromEntries((await t.deliveries()).map((delivery) => [delivery.webhookId, delivery.error]));
    assert.match(errors.literal!, /^refused target: 127\.0\.0\.1 is a loopback address/);
    assert.match(errors.named!, /^refused target: localhost resolves to (127\.0\.0\.1|::1), a loopback address/);
  });

  it("follows no redirect: a 3xx is a failed attempt", async () => {
    t = await startWebhookKit();
    const target = await receiver(t.signingKey);
    const redirecting = await receiver(t.signingKey);
    redirecting.answer = () => ({ status: 307, headers: { location: target.url } });
    await t.createWebhook(redirecting.url, ["sms.subscribed"]);
    await optIn(t, "+19148440001");
    await t.scheduler.flush();
    assert.equal(target.requests.length, 0);
    const [delivery] = await t.deliveries();
    assert.deepEqual([delivery!.status, delivery!.responseStatus], ["pending", 307]);
  });
});
