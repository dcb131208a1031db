import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fakeClock } from "../../../adapters/clock/index.ts";
import { memoryStorage } from "../../../adapters/storage/memory/index.ts";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import { DeliveryRows } from "../../../plugins/webhooks/delivery-rows.ts";
import { FirstAttempts } from "../../../plugins/webhooks/first-attempts.ts";
import { OutcomePages } from "../../../plugins/webhooks/outcome-pages.ts";
import { DELIVERY_OUTCOMES, OUTCOME_PAGES, webhookCollections, type DeliveryOutcomeRow, type OutcomePage, type StoredDelivery } from "../../../plugins/webhooks/records.ts";
import type { Storage } from "../../../src/index.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";
import { pagedIds, receiversClosedAfterEach, singleOptIn, startWebhookKit, type WebhookKit } from "./support.ts";

const AT = Date.parse("2026-03-01T12:00:00.000Z");

let t: WebhookKit | undefined;
const receiver = receiversClosedAfterEach(async () => {
  await t?.stop();
  t = undefined;
});

const storages = [
  ["memory", () => memoryStorage()],
  ["SQLite", () => sqliteStorage({ filename: join(temporaryDirectory("webhooks-outcome-pages"), "reachkit.db") })],
] as const;

/** Stored deliveries of webhook `w1`, each pending in the queue, and the rows that hold them. */
async function pendingDeliveries(storage: Storage, ids: readonly string[]): Promise<DeliveryRows> {
  await storage.ensureCollections(webhookCollections);
  const rows = new DeliveryRows(storage, new OutcomePages(storage), new FirstAttempts(storage));
  for (const id of ids) {
    const delivery: StoredDelivery = { id, webhookId: "w1", companyId: "c1", applicationId: "a1", event: "sms.subscribed", body: "{}", createdAt: AT, updatedAt: AT };
    await rows.deliveries.insert(delivery);
    await rows.due.insert({ id, webhookId: "w1", dueAt: AT, attempts: 0, body: "{}" });
  }
  return rows;
}

/** A first attempt's delivered outcome, as a drain writes it. */
const delivered = (id: string, at: number): DeliveryOutcomeRow => ({ id, webhookId: "w1", status: "delivered", attempts: 1, lastAttemptAt: at, responseStatus: 200, latencyMs: 4, responseBody: "ok", updatedAt: at });

const pagesOf = async (storage: Storage) =>
  (await storage.collection<OutcomePage>(OUTCOME_PAGES).find({ orderBy: [{ field: "lastId" }] })).items.map((page) => [page.firstId, page.lastId, pagedIds(page).sort()]);

describe("a webhook's outcome pages", () => {
  for (const [name, storage] of storages) {
    it(`hold a drain's delivered outcomes in ranges that follow one another; one answered after a later page is written goes to an outcome row (${name})`, async () => {
      const store = storage();
      const rows = await pendingDeliveries(store, ["msg_a", "msg_b", "msg_c", "msg_d", "msg_e"]);
      const mark = (outcome: DeliveryOutcomeRow) => ({ id: outcome.id, due: null, outcome });
      await rows.mark([mark(delivered("msg_c", AT + 1)), mark(delivered("msg_b", AT + 2))], { paged: true });
      // msg_a's answer came after msg_c's page: ahead of the webhook's last page, it gets a row of its own.
      await rows.mark([mark(delivered("msg_a", AT + 3)), mark(delivered("msg_d", AT + 3))], { paged: true });
      // Without `paged` (a redelivery by the CLI), an outcome row.
      await rows.mark([mark(delivered("msg_e", AT + 4))]);
      assert.deepEqual(await pagesOf(store), [
        ["msg_b", "msg_c", ["msg_b", "msg_c"]],
        ["msg_d", "msg_d", ["msg_d"]],
      ]);
      assert.deepEqual((await store.collection(DELIVERY_OUTCOMES).find({ orderBy: [{ field: "id" }] })).items.map((row) => row.id), ["msg_a", "msg_e"]);
      const shown = await rows.shownByIds(["msg_a", "msg_b", "msg_c", "msg_d", "msg_e"]);
      assert.deepEqual(
        shown.map((delivery) => [delivery.id, delivery.status, delivery.attempts, delivery.lastAttemptAt, delivery.responseStatus, delivery.latencyMs, delivery.responseBody, delivery.dueAt]),
        [
          ["msg_a", "delivered", 1, AT + 3, 200, 4, "ok", undefined],
          ["msg_b", "delivered", 1, AT + 2, 200, 4, "ok", undefined],
          ["msg_c", "delivered", 1, AT + 1, 200, 4, "ok", undefined],
          ["msg_d", "delivered", 1, AT + 3, 200, 4, "ok", undefined],
          ["msg_e", "delivered", 1, AT + 4, 200, 4, "ok", undefined],
        ],
      );
      // A later attempt's outcome row (a redelivery) is shown over the page's entry.
      await rows.mark([{ id: "msg_b", due: null, outcome: { ...delivered("msg_b", AT + 9), attempts: 2, responseStatus: 202 } }]);
      const [redelivered] = await rows.shownByIds(["msg_b"]);
      assert.deepEqual([redelivered!.attempts, redelivered!.responseStatus], [2, 202]);
      // Deleted, a delivery leaves its page; a page left empty goes.
      await rows.deleteAll([{ id: "msg_b", webhookId: "w1" }, { id: "msg_d", webhookId: "w1" }]);
      assert.deepEqual(await pagesOf(store), [["msg_b", "msg_c", ["msg_c"]]]);
      await store.close();
    });
  }

  it("follow the pages another process wrote since: an outcome before them goes to an outcome row", async () => {
    const store = memoryStorage();
    const rows = await pendingDeliveries(store, ["msg_b", "msg_c", "msg_d"]);
    const otherProcess = new DeliveryRows(store, new OutcomePages(store), new FirstAttempts(store));
    const mark = (outcome: DeliveryOutcomeRow) => ({ id: outcome.id, due: null, outcome });
    await rows.mark([mark(delivered("msg_b", AT + 1))], { paged: true });
    await otherProcess.mark([mark(delivered("msg_d", AT + 2))], { paged: true });
    // This process last wrote msg_b's page; msg_d's, written since, is the webhook's last.
    await rows.mark([mark(delivered("msg_c", AT + 3))], { paged: true });
    assert.deepEqual(await pagesOf(store), [
      ["msg_b", "msg_b", ["msg_b"]],
      ["msg_d", "msg_d", ["msg_d"]],
    ]);
    assert.deepEqual((await store.collection(DELIVERY_OUTCOMES).find()).items.map((row) => row.id), ["msg_c"]);
  });

  for (const [name, storage] of storages) {
    it(`hold each delivery's attempt as it was, its status and answer once when every one gives the same (${name})`, async () => {
      const store = storage();
      const rows = await pendingDeliveries(store, ["msg_a", "msg_b", "msg_c", "msg_d"]);
      const mark = (outcome: DeliveryOutcomeRow) => ({ id: outcome.id, due: null, outcome });
      const { latencyMs: _none, ...withoutLatency } = delivered("msg_b", AT + 7);
      const same = [delivered("msg_a", AT + 3), withoutLatency];
      const differing = [{ ...delivered("msg_c", AT + 1), responseStatus: 204, responseBody: "" }, { ...delivered("msg_d", AT + 2), latencyMs: 11 }];
      await rows.mark(same.map(mark), { paged: true });
      await rows.mark(differing.map(mark), { paged: true });
      const [first, second] = (await store.collection<OutcomePage>(OUTCOME_PAGES).find({ orderBy: [{ field: "lastId" }] })).items as unknown as Array<Record<string, unknown>>;
      assert.deepEqual([first!.statuses, first!.bodies, first!.latencies, first!.attemptedAt, first!.after], [200, "ok", [4, null], AT + 3, [0, 4]]);
      assert.deepEqual([second!.statuses, second!.bodies], [[204, 200], ["", "ok"]]);
      // The log shows each as its attempt gave it.
      const shown = await rows.shownByIds(["msg_a", "msg_b", "msg_c", "msg_d"]);
      const attempt = ({ status, attempts, lastAttemptAt, responseStatus, latencyMs, responseBody }: DeliveryOutcomeRow) => ({ status, attempts, lastAttemptAt, responseStatus, latencyMs, responseBody });
      assert.deepEqual(shown.map(attempt), [...same, ...differing].map(attempt));
    });
  }

  it("written before their outcomes were held in columns (an object a delivery) are still read, and rewritten in columns when one of their deliveries goes", async () => {
    const store = memoryStorage();
    const rows = await pendingDeliveries(store, ["msg_a", "msg_b"]);
    const paged = (id: string, at: number) => ({ id, attempts: 1, lastAttemptAt: at, responseStatus: 200, latencyMs: 5, responseBody: "ok" });
    await store.collection<OutcomePage>(OUTCOME_PAGES).insert({ id: "w1:msg_a", webhookId: "w1", firstId: "msg_a", lastId: "msg_b", outcomes: [paged("msg_a", AT), paged("msg_b", AT + 1)] });
    assert.deepEqual((await rows.shownByIds(["msg_a", "msg_b"])).map((delivery) => [delivery.status, delivery.lastAttemptAt, delivery.latencyMs]), [["delivered", AT, 5], ["delivered", AT + 1, 5]]);
    await rows.deleteAll([{ id: "msg_a", webhookId: "w1" }]);
    const [page] = (await store.collection<OutcomePage>(OUTCOME_PAGES).find()).items;
    assert.deepEqual(page, { id: "w1:msg_a", webhookId: "w1", firstId: "msg_a", lastId: "msg_b", ids: ["msg_b"], attemptedAt: AT + 1, after: [0], latencies: [5], statuses: 200, bodies: "ok" });
    assert.deepEqual((await rows.shownByIds(["msg_b"])).map((delivery) => [delivery.status, delivery.lastAttemptAt]), [["delivered", AT + 1]]);
  });

  it("hold no retry: a delivery delivered at its second attempt keeps its outcome row", async () => {
    t = await startWebhookKit({ clock: fakeClock(new Date(AT).toISOString()) });
    const receiving = await receiver(t.signingKey);
    let answers = 0;
    receiving.answer = () => ({ status: answers++ === 0 ? 500 : 200 });
    await t.createWebhook(receiving.url, ["sms.subscribed"]);
    await t.request({ method: "POST", url: "/v1/subscriptions", body: singleOptIn("+19148440301") });
    await t.scheduler.flush();
    await t.scheduler.advance(60_000);
    assert.deepEqual((await t.deliveries()).map((delivery) => [delivery.status, delivery.attempts, delivery.responseStatus]), [["delivered", 2, 200]]);
    assert.deepEqual([await t.kit.storage.collection(DELIVERY_OUTCOMES).count(), await t.kit.storage.collection(OUTCOME_PAGES).count()], [1, 0]);
  });

  it("are read for the log's delivered ones among its deliveries, at most a thousand of them a page: a page may come short, with the cursor of the next", async () => {
    t = await startWebhookKit({ clock: fakeClock(new Date(AT).toISOString()) });
    const rows = new DeliveryRows(t.kit.storage, new OutcomePages(t.kit.storage), new FirstAttempts(t.kit.storage));
    const stored = (id: string): StoredDelivery => ({ id, webhookId: "w1", companyId: "c1", applicationId: "a1", event: "sms.subscribed", body: "{}", createdAt: AT, updatedAt: AT });
    // The oldest delivered, then 1,000 that have had no attempt (pending, their due rows not needed to show them so).
    await rows.deliveries.insert(stored("msg_0000"));
    await rows.outcomes.insert(delivered("msg_0000", AT));
    for (let n = 1; n <= 1_000; n++) await rows.deliveries.insert(stored(`msg_${String(n).padStart(4, "0")}`));
    const deliveries = t.kit.plugin("webhooks").deliveries;
    const first = await deliveries.logPage("w1", { status: "delivered", limit: 10 });
    assert.deepEqual(first.items, []);
    assert.ok(first.nextCursor);
    const second = await deliveries.logPage("w1", { status: "delivered", limit: 10, after: first.nextCursor });
    assert.deepEqual([second.items.map((delivery) => delivery.id), second.nextCursor], [["msg_0000"], undefined]);
  });
});
