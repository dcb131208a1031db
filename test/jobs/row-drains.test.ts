import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import Database from "better-sqlite3";
import { scanIn } from "../../bench/servers/baseline-sql.ts";
import { fakeClock } from "../../adapters/clock/index.ts";
import { memoryStorage } from "../../adapters/storage/memory/index.ts";
import { sqliteStorage } from "../../adapters/storage/sqlite/index.ts";
import { DELIVERIES, DRAIN_JOB, webhookDrainKey, type DeliveryRecord } from "../../plugins/webhooks/index.ts";
import { DUE_DELIVERIES, type DueDelivery } from "../../plugins/webhooks/records.ts";
import { OUTBOX_DRAIN_JOB, type Storage } from "../../src/index.ts";
import { OUTBOX_COLLECTION } from "../../src/messaging/outbox-record.ts";
import { Receiver, singleOptIn, startWebhookKit } from "../plugins/webhooks/support.ts";
import { withCollectionMethod } from "../support/storage-wrappers.ts";
import { indexesRead, planOf, statementsOn } from "../support/sqlite-plans.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";
import { startTestKit } from "../support/test-kit.ts";

const TO = "+15555550100";
const HOUR = 3_600_000;
/** Two attempts a job, a second apart: a drain dies within seconds. */
const JOBS = { maxAttempts: 2, backoffBaseMs: 1_000, backoffMaxMs: 60_000 };

/**
 * `storage` whose drains' page reads (a due-by-now read of `collection`) fail while `failing()` holds: what a
 * storage failing under a drain through its every attempt does.
 */
function failingPageReads(storage: Storage, collection: string, failing: () => boolean): Storage {
  return withCollectionMethod(storage, "find", (find, name) =>
    name !== collection
      ? find
      : async (query) => {
          if ((query?.where as { dueAt?: { lte?: number } } | undefined)?.dueAt?.lte !== undefined && failing()) throw new Error("storage unavailable");
          return find(query);
        },
  );
}

describe("a drain that died", () => {
  it("the outbox: a sender's drain that fails its last attempt queues the next, which sends the waiting text", async () => {
    let failures = 2;
    const storage = failingPageReads(memoryStorage(), OUTBOX_COLLECTION, () => failures-- > 0);
    const t = await startTestKit({ storage, config: { messaging: { ratePerSecond: Infinity }, jobs: JOBS } });
    await t.kit.outbox.send({ companyId: t.company.companyId, to: TO, body: "waited", kind: "test" });
    await t.scheduler.advance(10_000);
    assert.deepEqual((await t.kit.jobs.list({ type: OUTBOX_DRAIN_JOB })).map((job) => job.status).sort(), ["dead", "done"]);
    assert.deepEqual(t.sms.sentTo(TO).map((text) => text.body), ["waited"]);
    await t.stop();
  });

  it("the outbox: at start, a sender with texts due and no live drain gets one", async () => {
    const filename = join(temporaryDirectory("rearm-outbox"), "reachkit.db");
    const clock = fakeClock("2026-03-01T12:00:00.000Z");
    const before = await startTestKit({ storage: failingPageReads(sqliteStorage({ filename }), OUTBOX_COLLECTION, () => true), clock, config: { jobs: JOBS } });
    const text = await before.kit.outbox.send({ companyId: before.company.companyId, to: TO, body: "waited", kind: "test" });
    await before.scheduler.advance(10_000);
    // Dead, and nothing queued after it (as a drain of an earlier version left it, or a storage that failed its successor too).
    for (const job of await before.kit.jobs.list({ type: OUTBOX_DRAIN_JOB, status: "queued" })) await before.kit.jobs.cancel(job.key!);
    assert.ok((await before.kit.jobs.list({ type: OUTBOX_DRAIN_JOB, status: "dead" })).length > 0);
    await before.stop();

    const t = await startTestKit({ storage: sqliteStorage({ filename }), clock, bare: true });
    await t.scheduler.flush();
    assert.deepEqual(t.sms.sentTo(TO).map((sent) => sent.body), ["waited"]);
    assert.equal((await t.kit.outbox.get(text.id))!.status, "sent");
    await t.stop();
  });

  it("webhooks: a webhook's drain that fails its last attempt queues the next, which sends the waiting delivery", async () => {
    let failures = 2;
    const t = await startWebhookKit({ storage: failingPageReads(memoryStorage(), DUE_DELIVERIES, () => failures-- > 0), config: { jobs: JOBS } });
    const receiving = await Receiver.start(t.signingKey);
    try {
      await t.createWebhook(receiving.url, ["sms.subscribed"]);
      await t.request({ method: "POST", url: "/v1/subscriptions", body: singleOptIn("+19148440101") });
      await t.scheduler.advance(10_000);
      assert.deepEqual((await t.kit.jobs.list({ type: DRAIN_JOB })).map((job) => job.status).sort(), ["dead", "done"]);
      assert.deepEqual(receiving.requests.map((request) => request.json.subscriber.phone), ["+19148440101"]);
    } finally {
      await t.stop();
      await receiving.close();
    }
  });

  it("webhooks: at start, a webhook with deliveries due and no live drain gets one", async () => {
    const filename = join(temporaryDirectory("rearm-webhooks"), "reachkit.db");
    const clock = fakeClock("2026-03-01T12:00:00.000Z");
    const before = await startWebhookKit({ storage: failingPageReads(sqliteStorage({ filename }), DUE_DELIVERIES, () => true), clock, config: { jobs: JOBS } });
    const receiving = await Receiver.start(before.signingKey);
    try {
      const webhook = await before.createWebhook(receiving.url, ["sms.subscribed"]);
      await before.request({ method: "POST", url: "/v1/subscriptions", body: singleOptIn("+19148440102") });
      await before.scheduler.advance(10_000);
      await before.kit.jobs.cancel(webhookDrainKey({ webhookId: webhook.id }));
      assert.ok((await before.kit.jobs.list({ type: DRAIN_JOB, status: "dead" })).length > 0);
      await before.stop();

      const t = await startWebhookKit({ storage: sqliteStorage({ filename }), clock, bare: true });
      await t.scheduler.flush();
      assert.deepEqual(receiving.requests.map((request) => request.json.subscriber.phone), ["+19148440102"]);
      assert.deepEqual((await t.deliveries()).map((delivery) => delivery.status), ["delivered"]);
      await t.scheduler.advance(HOUR);
      assert.equal(receiving.requests.length, 1, "once");
      await t.stop();
    } finally {
      await receiving.close();
    }
  });
});

describe("re-arming at start", () => {
  it("reads each drain's first due row through the sparse (field, dueAt) index: no scan, whatever the backlog", async () => {
    const filename = join(temporaryDirectory("rearm-plans"), "reachkit.db");
    const clock = fakeClock("2026-03-01T12:00:00.000Z");
    const first = await startWebhookKit({ storage: sqliteStorage({ filename }), clock });
    // A text and a delivery due, each with its drain queued: the start reads past each drain's rows to the next drain's.
    await first.kit.outbox.send({ companyId: first.company.companyId, to: TO, body: "due", kind: "test" });
    const now = clock.now();
    await first.kit.storage.collection<DeliveryRecord>(DELIVERIES).insert({ id: "msg_due", webhookId: "w-1", companyId: first.company.companyId, applicationId: "a-1", event: "sms.subscribed", body: "{}", status: "pending", attempts: 0, createdAt: now, updatedAt: now });
    await first.kit.storage.collection<DueDelivery>(DUE_DELIVERIES).insert({ id: "msg_due", webhookId: "w-1", dueAt: now, attempts: 0, body: "{}" });
    await first.stop();
    const started: Array<{ table: string; statements: Set<string> }> = [];
    let kit: Awaited<ReturnType<typeof startWebhookKit>> | undefined;
    const outbox = await statementsOn(OUTBOX_COLLECTION, async () => {
      const deliveries = await statementsOn(DUE_DELIVERIES, async () => void (kit = await startWebhookKit({ storage: sqliteStorage({ filename }), clock, bare: true })));
      started.push({ table: DUE_DELIVERIES, statements: deliveries });
    });
    started.push({ table: OUTBOX_COLLECTION, statements: outbox });
    await kit!.stop();
    const db = new Database(filename, { readonly: true });
    try {
      for (const { table, statements } of started) {
        const rearm = [...statements].filter((sql) => /"f_dueAt" IS NOT NULL/.test(sql));
        assert.equal(rearm.length, 2, `${table}: the first read and the read after a drain: ${[...statements].join("\n")}`);
        for (const sql of rearm) assert.equal(scanIn(db, sql), undefined, sql);
        for (const sql of rearm) assert.ok(indexesRead(planOf(db, sql)).some((index) => index.includes("dueAt")), sql);
      }
    } finally {
      db.close();
    }
  });
});
