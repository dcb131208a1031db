import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { afterEach, describe, it } from "node:test";
import { appointmentsPlugin } from "../../../plugins/appointments/index.ts";
import { catalogPlugin } from "../../../plugins/catalog/index.ts";
import { privacyPlugin } from "../../../plugins/privacy/index.ts";
import { profilesPlugin } from "../../../plugins/profiles/index.ts";
import { DELIVERIES, DRAIN_JOB } from "../../../plugins/webhooks/index.ts";
import { DUE_DELIVERIES } from "../../../plugins/webhooks/records.ts";
import { SUBSCRIPTIONS } from "../../../plugins/subscriptions/records.ts";
import type { JobRecord } from "../../../src/index.ts";
import { memoryStorage } from "../../../adapters/storage/memory/index.ts";
import { wrapStorage } from "../../support/storage-wrappers.ts";
import type { Json } from "../../support/test-kit.ts";
import { ndjson, product, variant } from "../catalog/support.ts";
import { Receiver, singleOptIn, startWebhookKit, type WebhookKit } from "./support.ts";

let t: WebhookKit | undefined;
let hooks: Receiver | undefined;
afterEach(async () => {
  await hooks?.close();
  await t?.stop();
  t = hooks = undefined;
});

/** A kit with every plugin that emits events, and one webhook subscribed to `events`. */
async function kitListeningTo(events: string[]) {
  t = await startWebhookKit({ plugins: [catalogPlugin(), privacyPlugin(), appointmentsPlugin(), profilesPlugin()], config: { rateLimits: { default: Infinity, "opt-in": Infinity, unsubscribe: Infinity, "catalog-upload": Infinity } } });
  hooks = await Receiver.start(t.signingKey);
  await t.createWebhook(hooks.url, events);
  return { t, hooks };
}

const received = () => hooks!.requests.map((request) => request.json as Json);

describe("the events webhooks carry", () => {
  it("sms.unsubscribed, email.subscribed, email.unsubscribed, and phone.* under their old names", async () => {
    const { t } = await kitListeningTo(["email.subscribed", "email.unsubscribed", "phone.unsubscribed"]);
    await t.request({ method: "POST", url: "/v1/subscriptions", body: singleOptIn("+19148440001", { email: "ada@example.com" }) });
    await t.scheduler.flush();
    await t.request({ method: "POST", url: "/v1/subscriptions/unsubscribe", body: { user: { phone: "+19148440001", email: "ada@example.com" } } });
    await t.scheduler.flush();
    assert.deepEqual(received().map((event) => event.type).sort(), ["email.subscribed", "email.unsubscribed", "phone.unsubscribed"]);
    const unsubscribed = received().find((event) => event.type === "phone.unsubscribed");
    assert.deepEqual(unsubscribed.subscriber.phone, "+19148440001");
    assert.deepEqual(unsubscribed.subscription, { type: "MARKETING", channel: "TEXT" });
    assert.ok(received().every((event) => hooks!.hmacMatches(hooks!.requests[received().indexOf(event)]!)));
  });

  it("sms.sent and sms.delivered from the text's delivery status, sms.inbound_message for a text that is no keyword, custom_attribute.set", async () => {
    const { t } = await kitListeningTo(["sms.sent", "sms.delivered", "sms.inbound_message", "custom_attribute.set"]);
    await t.request({ method: "POST", url: "/v1/subscriptions", body: singleOptIn("+19148440007") });
    await t.scheduler.flush();
    const [text] = t.sms.sent;
    await t.kit.outbox.applyReceipt({ providerMessageId: text!.providerMessageId, status: "delivered" });
    await t.kit.plugin("subscriptions").handleInbound({ from: "+19148440007", to: (t.company as Json).senderNumber, body: "What time do you open?" });
    const attributes = { properties: { tier: "gold", visits: 3 }, user: { phone: "+19148440007", externalIdentifiers: { clientUserId: "u-7" } } };
    assert.equal((await t.request({ method: "POST", url: "/v1/attributes/custom", body: attributes })).status, 200);
    await t.scheduler.flush();
    const [sent, delivered, inbound, attribute] = received();
    assert.deepEqual([sent.type, sent.subscriber.phone, sent.message.status, sent.message.provider_message_id], ["sms.sent", "+19148440007", "sent", text!.providerMessageId]);
    assert.deepEqual([delivered.type, delivered.message.id, delivered.message.previous_status], ["sms.delivered", sent.message.id, "sent"]);
    assert.deepEqual([inbound.type, inbound.subscriber.phone, inbound.message.body], ["sms.inbound_message", "+19148440007", "What time do you open?"]);
    assert.equal(inbound.subscriber.external_id, sent.subscriber.external_id, "the same subscriber");
    assert.deepEqual([attribute.type, attribute.custom_attributes, attribute.subscriber.external_identifiers.client_user_id], ["custom_attribute.set", { tier: "gold", visits: 3 }, ["u-7"]]);
    assert.equal(received().length, 4);
  });

  it("email.sent and email.delivered from an email's delivery status", async () => {
    const { t } = await kitListeningTo(["email.sent", "email.delivered"]);
    const email = await t.kit.outbox.sendEmail({ companyId: t.company.companyId, to: "ada@example.com", subject: "Hello", text: "Hi Ada", kind: "newsletter" });
    await t.scheduler.flush();
    const [sent] = t.email.sent;
    await t.kit.outbox.applyReceipt({ providerMessageId: sent!.providerMessageId, status: "delivered" });
    await t.scheduler.flush();
    assert.deepEqual(
      received().map((event) => [event.type, event.subscriber.email, event.message.id, event.message.kind]),
      [
        ["email.sent", "ada@example.com", email.id, "newsletter"],
        ["email.delivered", "ada@example.com", email.id, "newsletter"],
      ],
    );
  });

  it("a pending double opt-in is not subscribed yet: sms.subscribed comes with the Y reply", async () => {
    const { t } = await kitListeningTo(["sms.subscribed"]);
    await t.request({ method: "POST", url: "/v1/subscriptions", body: { ...singleOptIn("+19148440002"), singleOptIn: false } });
    await t.scheduler.flush();
    assert.equal(hooks!.requests.length, 0);
    await t.kit.plugin("subscriptions").handleInbound({ from: "+19148440002", to: (t.company as Json).senderNumber, body: "Y" });
    await t.scheduler.flush();
    assert.deepEqual(received().map((event) => [event.type, event.subscriber.phone]), [["sms.subscribed", "+19148440002"]]);
  });

  it("catalog journey events, with the product, the variant and the values before and after", async () => {
    const { t } = await kitListeningTo(["catalog.variant.back_in_stock"]);
    const catalog = t as WebhookKit;
    const save = async (available: boolean) => {
      const upload = t.json(await catalog.request({ method: "POST", url: "/v1/product-catalog/uploads", body: {} }));
      await catalog.request({ method: "PUT", url: new URL(upload.uploadUrl).pathname + new URL(upload.uploadUrl).search, body: ndjson(product("tee", { variants: [variant({ id: "tee-m", available })] })), token: null });
      await catalog.scheduler.flush();
    };
    await save(false);
    await save(true);
    const [event] = received();
    assert.equal(event.type, "catalog.variant.back_in_stock");
    assert.deepEqual(event.product, { id: "tee", name: "Product tee", link: "https://shop.example.com/p/tee" });
    assert.equal(event.variant.id, "tee-m");
    assert.deepEqual([event.before, event.after], [{ availableForPurchase: false }, { availableForPurchase: true }]);
  });

  it("privacy.request.processed, and the request deletes the deliveries about its subject", async () => {
    const { t } = await kitListeningTo(["sms.subscribed", "privacy.request.processed"]);
    await t.request({ method: "POST", url: "/v1/subscriptions", body: singleOptIn("+19148440003") });
    await t.scheduler.flush();
    assert.equal((await t.deliveries()).filter((delivery) => delivery.phone === "+19148440003").length, 1);
    const request = t.json(await t.request({ method: "POST", url: "/v1/privacy/delete-request", body: { subjectPhone: "+19148440003" } }));
    await t.scheduler.flush();
    const processed = received().find((event) => event.type === "privacy.request.processed");
    assert.equal(processed.privacy_request.id, request.id);
    assert.ok(processed.privacy_request.removed_records >= 3);
    const left = await t.deliveries();
    assert.deepEqual(left.filter((delivery) => delivery.body.includes("+19148440003")), [], "no delivery log entry holds the subject's phone");
  });

  it("appointment.step.queued and appointment.step.skipped", async () => {
    const { t } = await kitListeningTo(["appointment.step.queued", "appointment.step.skipped"]);
    const legacy = { token: (t.company as Json).legacyToken };
    await t.request({ method: "POST", url: "/v1/subscriptions", body: singleOptIn("+19148440004") });
    await t.scheduler.flush();
    const type = t.json(await t.request({ method: "POST", url: "/events/types", body: { type: "Haircut" }, ...legacy })).uuid;
    await t.request({ method: "POST", url: "/events/types/messages", body: { eventType: { uuid: type }, messageType: "CONFIRMATION", text: "Booked." }, ...legacy });
    const reminder = t.json(
      await t.request({ method: "POST", url: "/events/reminders", body: { eventType: { uuid: type }, phone: "+19148440004", eventDateTime: "2026-03-08T15:00:00", subscriberTimeZone: "America/New_York" }, ...legacy }),
    );
    await t.request({ method: "POST", url: `/events/reminders/${reminder.uuid}/cancel`, ...legacy });
    await t.scheduler.flush();
    const steps = received().map((event) => [event.type, event.appointment.step, event.appointment.reason ?? ""]);
    assert.deepEqual(steps, [
      ["appointment.step.queued", "CONFIRMATION", ""],
      ["appointment.step.skipped", "CANCELLATION", "no_message"],
    ]);
    assert.equal(received()[0].appointment.reminder_uuid, reminder.uuid);
    assert.equal(received()[0].subscriber.phone, "+19148440004");
  });
});

describe("deliveries are queued in the transaction of the change", () => {
  it("at every commit, each subscription an opt-in made has its pending delivery and a live drain: a crash right after any commit loses none", async () => {
    const storage = memoryStorage();
    const atCommits: Array<{ subscriptions: number; deliveries: number; pending: number; drains: number }> = [];
    const nested = new AsyncLocalStorage<boolean>();
    const snapshots = wrapStorage(storage, {
      async transaction(fn) {
        if (nested.getStore()) return storage.transaction(fn);
        const result = await storage.transaction(() => nested.run(true, fn));
        // What a kill -9 right after this commit would leave.
        const subscriptions = await storage.collection(SUBSCRIPTIONS).count();
        const deliveries = await storage.collection(DELIVERIES).count();
        const pending = await storage.collection(DUE_DELIVERIES).count();
        const drains = await storage.collection<JobRecord>("reachkit_jobs").count({ type: DRAIN_JOB, status: { in: ["queued", "running"] } });
        atCommits.push({ subscriptions, deliveries, pending, drains });
        return result;
      },
    });
    t = await startWebhookKit({ storage: snapshots });
    hooks = await Receiver.start(t.signingKey);
    await t.createWebhook(hooks.url, ["sms.subscribed"]);
    atCommits.length = 0;
    for (const phone of ["+19148440005", "+19148440006"]) await t.request({ method: "POST", url: "/v1/subscriptions", body: singleOptIn(phone) });
    await t.scheduler.flush();
    assert.ok(atCommits.some((state) => state.subscriptions === 2));
    for (const state of atCommits) {
      assert.equal(state.deliveries, state.subscriptions, JSON.stringify(atCommits));
      if (state.pending > 0) assert.equal(state.drains, 1, JSON.stringify(atCommits));
    }
    assert.equal(hooks.requests.length, 2);
    assert.equal(await storage.collection(DUE_DELIVERIES).count(), 0);
    assert.deepEqual((await t.deliveries()).map((delivery) => delivery.status), ["delivered", "delivered"]);
  });
});
