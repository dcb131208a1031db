import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fakeClock } from "../../../adapters/clock/index.ts";
import { memoryStorage } from "../../../adapters/storage/memory/index.ts";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import { deliveriesDueInRowsOfTheirOwn, dueRowsCarryTheirBodies } from "../../../plugins/webhooks/migrations.ts";
import { DELIVERIES, DELIVERY_OUTCOMES, DUE_DELIVERIES, OUTCOME_PAGES, webhookCollections, type DeliveryRecord, type DueDelivery, type OutcomePage } from "../../../plugins/webhooks/records.ts";
import type { Storage } from "../../../src/index.ts";
import { MIGRATIONS_COLLECTION, migrationsCollection } from "../../../src/kernel/migrations.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";
import { pagedIds, receiversClosedAfterEach, singleOptIn, startWebhookKit, type WebhookKit } from "./support.ts";

const DAY = 24 * 3_600_000;

let t: WebhookKit | undefined;
const receiver = receiversClosedAfterEach(async () => {
  await t?.stop();
  t = undefined;
});

/** How many rows each of a delivery's three collections holds, and how many outcomes its outcome pages hold. */
async function rowCounts(storage: Storage): Promise<number[]> {
  const rows = await Promise.all([DELIVERIES, DUE_DELIVERIES, DELIVERY_OUTCOMES].map((name) => storage.collection(name).count()));
  const pages = (await storage.collection<OutcomePage>(OUTCOME_PAGES).find()).items;
  return [...rows, pages.reduce((sum, page) => sum + pagedIds(page).length, 0)];
}

/** A kit whose one webhook's receiver answers 200 to the phones of `delivered` and 500 to the others (their deliveries stay pending). */
async function kitWithDeliveries(storage: Storage, delivered: readonly string[], pending: readonly string[]) {
  const clock = fakeClock("2026-03-01T12:00:00.000Z");
  t = await startWebhookKit({ storage, clock });
  const receiving = await receiver(t.signingKey);
  receiving.answer = (request) => ({ status: delivered.includes(request.json.subscriber.phone) ? 200 : 500 });
  const webhook = await t.createWebhook(receiving.url, ["sms.subscribed"]);
  for (const phone of [...delivered, ...pending]) {
    assert.equal((await t.request({ method: "POST", url: "/v1/subscriptions", body: singleOptIn(phone) })).status, 202);
    clock.advance(1);
  }
  await t.scheduler.flush();
  return { kit: t, clock, receiving, webhookId: webhook.id as string, deliveries: t.kit.plugin("webhooks").deliveries };
}

describe("a delivery's rows", () => {
  it("show the log by status: the pending ones by their due rows, the others by their outcomes, newest first, a page at a time", async () => {
    const { webhookId, deliveries } = await kitWithDeliveries(memoryStorage(), ["+19148440201", "+19148440202", "+19148440203"], ["+19148440204"]);
    const phones = (log: DeliveryRecord[]) => log.map((delivery) => JSON.parse(delivery.body).subscriber.phone);
    assert.deepEqual(phones(await deliveries.log(webhookId, { status: "delivered" })), ["+19148440203", "+19148440202", "+19148440201"]);
    const firstDelivered = await deliveries.logPage(webhookId, { status: "delivered", limit: 2 });
    const secondDelivered = await deliveries.logPage(webhookId, { status: "delivered", limit: 2, after: firstDelivered.nextCursor });
    assert.deepEqual([firstDelivered.items, secondDelivered.items].map(phones), [["+19148440203", "+19148440202"], ["+19148440201"]]);
    assert.equal(secondDelivered.nextCursor, undefined);
    const [pending] = await deliveries.log(webhookId, { status: "pending" });
    assert.deepEqual([phones([pending!]), pending!.attempts, pending!.responseStatus, typeof pending!.dueAt], [["+19148440204"], 1, 500, "number"]);
    assert.deepEqual(await deliveries.log(webhookId, { status: "failed" }), []);
    const first = await deliveries.logPage(webhookId, { limit: 3 });
    const second = await deliveries.logPage(webhookId, { limit: 3, after: first.nextCursor });
    assert.deepEqual([...first.items, ...second.items].map((delivery) => delivery.status), ["pending", "delivered", "delivered", "delivered"]);
    assert.equal(second.nextCursor, undefined);
  });

  it("show a delivery not attempted yet (no row but its own) as pending since it was made, list it among the pending ones, and keep it through the retention", async () => {
    const clock = fakeClock("2026-03-01T12:00:00.000Z");
    const kit = (t = await startWebhookKit({ clock }));
    const receiving = await receiver(kit.signingKey);
    const webhook = await kit.createWebhook(receiving.url, ["privacy.request.processed"]);
    const companyId = kit.company.companyId as string;
    await kit.kit.storage.transaction(() => kit.kit.events.emit("privacy.request.processed", { companyId, requestId: "r-1", removedRecords: 1, at: clock.now() }));
    // Its drain has not run: the delivery's row is all there is.
    assert.deepEqual(await rowCounts(kit.kit.storage), [1, 0, 0, 0]);
    const deliveries = kit.kit.plugin("webhooks").deliveries;
    const [pending] = await deliveries.log(webhook.id as string, { status: "pending" });
    assert.deepEqual([pending?.status, pending?.attempts, pending?.dueAt === pending?.createdAt], ["pending", 0, true]);
    clock.advance(31 * DAY);
    assert.equal(await deliveries.prune(), 0);
    await kit.scheduler.flush();
    assert.equal(receiving.requests.length, 1);
    assert.deepEqual((await deliveries.log(webhook.id as string)).map((delivery) => delivery.status), ["delivered"]);
  });

  it("go together: a privacy deletion removes the subject's deliveries with their due and outcome rows and their pages' entries, and no one else's", async () => {
    const { kit, deliveries } = await kitWithDeliveries(memoryStorage(), ["+19148440211", "+19148440212"], ["+19148440213"]);
    assert.deepEqual(await rowCounts(kit.kit.storage), [3, 1, 1, 2]);
    assert.equal(await deliveries.deleteSubjectData({ companyId: kit.company.companyId, phone: "+19148440213" }), 1);
    assert.equal(await deliveries.deleteSubjectData({ companyId: kit.company.companyId, phone: "+19148440211" }), 1);
    assert.deepEqual(await rowCounts(kit.kit.storage), [1, 0, 0, 1]);
    assert.deepEqual((await kit.deliveries()).map((delivery) => `${JSON.parse(delivery.body).subscriber.phone} ${delivery.status}`), ["+19148440212 delivered"]);
    // The page's last entry gone, so is the page.
    assert.equal(await deliveries.deleteSubjectData({ companyId: kit.company.companyId, phone: "+19148440212" }), 1);
    assert.deepEqual([await rowCounts(kit.kit.storage), await kit.kit.storage.collection(OUTCOME_PAGES).count()], [[0, 0, 0, 0], 0]);
  });

  for (const [name, storage] of [
    ["memory", () => memoryStorage()],
    ["SQLite", () => sqliteStorage({ filename: join(temporaryDirectory("webhooks-delivery-rows"), "reachkit.db") })],
  ] as const) {
    it(`go together: a delivery deleted while its attempt is out gets no outcome row when the receiver answers (${name})`, () => deletedWhileOut(storage()));
  }

  async function deletedWhileOut(storage: Storage): Promise<void> {
    const kit = (t = await startWebhookKit({ storage }));
    const deliveries = kit.kit.plugin("webhooks").deliveries;
    const receiving = await receiver(kit.signingKey);
    const { arrived, release } = receiving.holdAnswers();
    await kit.createWebhook(receiving.url, ["sms.subscribed"]);
    await kit.request({ method: "POST", url: "/v1/subscriptions", body: singleOptIn("+19148440231") });
    const flushed = kit.scheduler.flush();
    await arrived;
    assert.equal(await deliveries.deleteSubjectData({ companyId: kit.company.companyId, phone: "+19148440231" }), 1);
    release();
    await flushed;
    assert.equal(receiving.requests.length, 1);
    assert.deepEqual(await rowCounts(kit.kit.storage), [0, 0, 0, 0]);
  }

  it("of a disabled webhook leave the queue cancelled when due, their last attempt's record kept", async () => {
    const { kit, webhookId, deliveries } = await kitWithDeliveries(memoryStorage(), [], ["+19148440241"]);
    const disabled = await kit.request({ method: "PUT", url: `/v1/webhooks/${webhookId}`, body: { disabled: true } });
    assert.equal(disabled.status, 200, disabled.body);
    await kit.scheduler.advance(60_000);
    const [cancelled] = await deliveries.log(webhookId);
    assert.deepEqual([cancelled!.status, cancelled!.attempts, cancelled!.responseStatus, cancelled!.dueAt], ["cancelled", 1, 500, undefined]);
    assert.match(cancelled!.error!, /^the webhook is disabled/);
    assert.deepEqual(await rowCounts(kit.kit.storage), [1, 0, 1, 0]);
  });

  it("go together: the retention removes finished deliveries older than it with their outcomes, and keeps a pending one", async () => {
    const { kit, clock, deliveries } = await kitWithDeliveries(memoryStorage(), ["+19148440221"], ["+19148440222"]);
    assert.deepEqual(await rowCounts(kit.kit.storage), [2, 1, 1, 1]);
    clock.advance(31 * DAY);
    assert.equal(await deliveries.prune(), 1);
    assert.deepEqual(await rowCounts(kit.kit.storage), [1, 1, 1, 0]);
    assert.deepEqual((await kit.deliveries()).map((delivery) => `${JSON.parse(delivery.body).subscriber.phone} ${delivery.status}`), ["+19148440222 pending"]);
  });

  it("of a database made before them are moved once at start: the finished ones logged by status, a pending one whose attempt was out due at once", async () => {
    const filename = join(temporaryDirectory("webhooks-delivery-rows"), "reachkit.db");
    const { kit, webhookId, clock } = await kitWithDeliveries(sqliteStorage({ filename }), [], []);
    const { companyId } = kit.company;
    await kit.stop();
    t = undefined;
    // Rows as an earlier version left them: a delivered and a failed one, one pending later, one whose attempt was out when it stopped.
    const before = sqliteStorage({ filename });
    await before.ensureCollections([migrationsCollection, ...webhookCollections]);
    await before.collection(MIGRATIONS_COLLECTION).delete(`webhooks:${deliveriesDueInRowsOfTheirOwn.id}`);
    const now = clock.now();
    const old = (id: string, fields: Partial<DeliveryRecord & { inFlightSince: number }>): DeliveryRecord => ({
      id, webhookId, companyId, applicationId: "a-1", event: "sms.subscribed", body: `{"subscriber":{"phone":"${id}"}}`, status: "pending", attempts: 0, createdAt: now, updatedAt: now, ...fields,
    });
    await before.collection<DeliveryRecord>(DELIVERIES).upsertMany([
      old("msg_old_1", { status: "delivered", attempts: 1, lastAttemptAt: now, responseStatus: 200, latencyMs: 3 }),
      old("msg_old_2", { status: "failed", attempts: 9, responseStatus: 500, error: "HTTP 500" }),
      old("msg_old_3", { attempts: 2, dueAt: now + DAY }),
      old("msg_old_4", { attempts: 1, dueAt: now + DAY, inFlightSince: now - 1_000 }),
    ]);
    await before.close();

    t = await startWebhookKit({ storage: sqliteStorage({ filename }), clock, bare: true });
    const deliveries = t.kit.plugin("webhooks").deliveries;
    const statusOf = async (status: DeliveryRecord["status"]) => (await deliveries.log(webhookId, { status })).map((delivery) => `${delivery.id} ${delivery.attempts}`);
    assert.deepEqual(await statusOf("delivered"), ["msg_old_1 1"]);
    assert.deepEqual(await statusOf("failed"), ["msg_old_2 9"]);
    assert.deepEqual(await statusOf("pending"), ["msg_old_4 1", "msg_old_3 2"]);
    assert.deepEqual((await deliveries.get("msg_old_4"))!.dueAt, now);
    assert.deepEqual((await deliveries.get("msg_old_3"))!.dueAt, now + DAY);
    assert.equal((await deliveries.get("msg_old_1"))!.latencyMs, 3);
  });

  it("of a database whose due rows carry no bodies get them once at start: a pending delivery is then sent with its own", async () => {
    const filename = join(temporaryDirectory("webhooks-delivery-rows"), "reachkit.db");
    const { kit, clock, receiving } = await kitWithDeliveries(sqliteStorage({ filename }), [], ["+19148440281"]);
    const [pending] = await kit.deliveries();
    assert.equal(pending!.status, "pending");
    await kit.stop();
    t = undefined;
    // The due row as the version before wrote it: no body. Due now. And one whose delivery is gone.
    const before = sqliteStorage({ filename });
    await before.ensureCollections([migrationsCollection, ...webhookCollections]);
    assert.equal(await before.collection(MIGRATIONS_COLLECTION).delete(`webhooks:${dueRowsCarryTheirBodies.id}`), true);
    const due = before.collection<DueDelivery>(DUE_DELIVERIES);
    await due.updateEach([{ id: pending!.id, patch: { body: undefined, dueAt: clock.now() } }]);
    await due.upsertMany([{ id: "msg_gone", webhookId: pending!.webhookId, dueAt: clock.now(), attempts: 0 } as DueDelivery]);
    await before.close();

    receiving.answer = undefined;
    receiving.requests.length = 0;
    t = await startWebhookKit({ storage: sqliteStorage({ filename }), clock, bare: true });
    await t.scheduler.flush();
    assert.deepEqual(receiving.requests.map((request) => request.body), [pending!.body]);
    assert.deepEqual((await t.deliveries()).map((delivery) => [delivery.id, delivery.status, delivery.attempts]), [[pending!.id, "delivered", 2]]);
    assert.equal(await t.kit.storage.collection(DUE_DELIVERIES).count(), 0);
  });
});
