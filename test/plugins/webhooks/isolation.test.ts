import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Webhook } from "standardwebhooks";
import { fakeClock } from "../../../adapters/clock/index.ts";
import { DELIVER_JOB, WEBHOOKS, webhookDrainKey, type WebhookRecord } from "../../../plugins/webhooks/index.ts";
import type { Json } from "../../support/test-kit.ts";
import { waitUntil } from "../../support/wait.ts";
import { receiversClosedAfterEach, singleOptIn, startWebhookKit, type WebhookKit } from "./support.ts";

const HOUR = 3_600_000;

let t: WebhookKit | undefined;
const receiver = receiversClosedAfterEach(async () => {
  await t?.stop();
  t = undefined;
});

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

  it("a slow receiver's deliveries wait in its own drain: the healthy receiver's drain delivers every event meanwhile and ends, and no job slot is held", async () => {
    t = await startWebhookKit({ webhooks: { concurrencyPerReceiver: 1 }, config: { jobs: { concurrency: 1 } } });
    const { slow, healthy, answerSlow } = await slowAndHealthy(t);
    const [slowHook, healthyHook] = (await t.kit.plugin("webhooks").registry.ofCompany(t.company.companyId)).sort((a, b) => (a.url === slow.url ? -1 : b.url === slow.url ? 1 : 0));
    const phones = ["+19148442101", "+19148442102", "+19148442103"];
    for (const phone of phones) assert.equal((await optIn(t, phone)).status, 202);
    const flushing = t.scheduler.flush();
    await waitFor(() => healthy.requests.length === 3 && slow.requests.length === 1);
    const drain = (webhook: WebhookRecord) => t!.kit.jobs.byKey(webhookDrainKey({ webhookId: webhook.id }));
    await waitUntil("the healthy receiver's drain ends", async () => (await drain(healthyHook!)) === undefined);
    assert.equal((await drain(slowHook!))?.status, "running", "the slow receiver's drain waits on its request");
    // The one job slot is free: a job of another kind runs while the slow receiver's drain waits.
    await t.kit.jobs.enqueue({ type: "webhooks.prune", payload: null });
    await waitUntil("another job runs", async () => (await t!.kit.jobs.list({ type: "webhooks.prune", status: "done" })).length > 0);
    assert.deepEqual(await t.kit.jobs.list({ type: DELIVER_JOB }), [], "no job per delivery");
    answerSlow();
    await flushing;
    await t.scheduler.flush();
    assert.deepEqual(slow.requests.map((r) => r.json.subscriber.phone), phones, "in order, once each");
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
