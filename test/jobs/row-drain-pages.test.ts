import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { memoryStorage } from "../../adapters/storage/memory/index.ts";
import { DELIVERIES, type DeliveryRecord } from "../../plugins/webhooks/index.ts";
import { DUE_DELIVERIES } from "../../plugins/webhooks/records.ts";
import type { Doc, Storage } from "../../src/index.ts";
import { receiversClosedAfterEach, singleOptIn, startWebhookKit, type WebhookKit } from "../plugins/webhooks/support.ts";
import { withCollectionMethod } from "../support/storage-wrappers.ts";

const DELIVERY_COUNT = 96;

let t: WebhookKit | undefined;
const receiver = receiversClosedAfterEach(async () => {
  await t?.stop();
  t = undefined;
});

/**
 * `storage` whose drains' page reads report the rows they return: of the due rows (due-by-now reads), and of the
 * deliveries before their first attempt (reads after the webhook's cursor, FirstAttempts).
 */
function countingPageReads(storage: Storage, read: (rows: readonly Doc[]) => void): Storage {
  type Conditions = Record<string, { lte?: number | string; gt?: string } | undefined>;
  const countingDueReads = withCollectionMethod(storage, "find", (find, name) => async (query) => {
    const page = await find(query);
    if (name === DUE_DELIVERIES && ((query?.where ?? {}) as Conditions).dueAt?.lte !== undefined) read(page.items);
    return page;
  });
  return withCollectionMethod(countingDueReads, "findFields", (findFields, name) => async (fields, query) => {
    const page = await findFields(fields, query);
    const id = ((query?.where ?? {}) as Conditions).id;
    if (name === DELIVERIES && id?.gt !== undefined && id.lte === undefined) read(page.items);
    return page;
  });
}

async function queueDeliveries(kit: WebhookKit, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const answer = await kit.request({ method: "POST", url: "/v1/subscriptions", body: singleOptIn(`+1914845${String(i).padStart(4, "0")}`) });
    assert.equal(answer.status, 202, answer.body);
  }
}

describe("a drain's page reads", () => {
  it("read each due row about once while its requests are out: the rows in flight are not read again with every page", async () => {
    const read: string[] = [];
    t = await startWebhookKit({ storage: countingPageReads(memoryStorage(), (rows) => read.push(...rows.map((row) => row.id))), webhooks: { concurrencyPerReceiver: 2 } });
    const receiving = await receiver(t.signingKey);
    // Answers a little later, so that the drain reads its next pages while requests are out.
    receiving.answer = () => new Promise((resolve) => setTimeout(() => resolve({ status: 200 }), 2));
    await t.createWebhook(receiving.url, ["sms.subscribed"]);
    await queueDeliveries(t, DELIVERY_COUNT);
    await t.scheduler.flush();
    assert.equal(receiving.requests.length, DELIVERY_COUNT);
    assert.deepEqual((await t.deliveries()).map((delivery) => delivery.status), Array(DELIVERY_COUNT).fill("delivered"));
    // Each delivery once: read after the webhook's cursor, on from the last one read (no due rows: every first attempt
    // succeeded). Reading every page from the head, as the drains did before they read on, gave 184-190 rows.
    assert.equal(read.length, DELIVERY_COUNT);
  });

  it("read the drain's own due rows once a while, not with every page, while deliveries before their first attempt fill the pages", async () => {
    let dueReads = 0;
    const countingDueReads = withCollectionMethod(memoryStorage(), "find", (find, name) => (query) => {
      if (name === DUE_DELIVERIES && (query?.where as { dueAt?: { lte?: number } } | undefined)?.dueAt?.lte !== undefined) dueReads++;
      return find(query);
    });
    t = await startWebhookKit({ storage: countingDueReads, webhooks: { concurrencyPerReceiver: 2 } });
    const receiving = await receiver(t.signingKey);
    await t.createWebhook(receiving.url, ["sms.subscribed"]);
    await queueDeliveries(t, DELIVERY_COUNT);
    await t.scheduler.flush();
    assert.equal(receiving.requests.length, DELIVERY_COUNT);
    // Pages of 16: the first page's read finds none due, and the clock stands still while the deliveries fill the next
    // five; once they run out, the drain reads its own rows again before it ends. A read with every page made seven.
    assert.equal(dueReads, 2);
  });

  it("a retry that falls due while deliveries before their first attempt fill the pages goes out with the next page after a while, not after them all", async () => {
    t = await startWebhookKit({ webhooks: { concurrencyPerReceiver: 1 } });
    const kit = t;
    const receiving = await receiver(kit.signingKey);
    await kit.createWebhook(receiving.url, ["sms.subscribed"]);
    let answers = 0;
    receiving.answer = async () => {
      answers++;
      if (answers === 1) return { status: 500 };
      if (answers === 16) {
        // Once the first delivery waits for its retry (its due row written), the clock passes its due time (10 s, ±20%).
        while ((await kit.kit.storage.collection(DUE_DELIVERIES).count()) === 0) await new Promise((resolve) => setTimeout(resolve, 5));
        kit.clock.advance(13_000);
      }
      return { status: 200 };
    };
    await queueDeliveries(kit, 40);
    await kit.scheduler.flush();
    const sent = receiving.requests.map((request) => String(request.headers["webhook-id"]));
    assert.equal(sent.length, 41);
    const retriedAt = sent.lastIndexOf(sent[0]!);
    // Pages of 8, one read ahead: the first page read after the clock moved puts it first.
    assert.ok(retriedAt > 15 && retriedAt < 32, `the retry went out as request ${retriedAt + 1} of 41`);
  });

  it("a delivery stored after the ones already read with an id before theirs (another process's clock) is still sent, once", async () => {
    t = await startWebhookKit({ webhooks: { concurrencyPerReceiver: 1 } });
    const kit = t;
    const receiving = await receiver(kit.signingKey);
    await kit.createWebhook(receiving.url, ["sms.subscribed"]);
    let early: DeliveryRecord | undefined;
    receiving.answer = async () => {
      if (early === undefined) {
        // Stored by a process whose clock lags: its id before every delivery read, while the drain reads on after the last one.
        const [first] = await kit.deliveries();
        const { dueAt: _dueAt, ...delivery } = first!;
        early = { ...delivery, id: "msg_0000early", body: '{"early":true}', status: "pending", attempts: 0, createdAt: first!.createdAt - 60_000 };
        await kit.kit.storage.collection<DeliveryRecord>(DELIVERIES).insert(early);
      }
      return { status: 200 };
    };
    await queueDeliveries(kit, 24);
    await kit.scheduler.flush();
    const sent = receiving.requests.map((request) => String(request.headers["webhook-id"]));
    assert.equal(sent.filter((id) => id === early!.id).length, 1, "the early row, once");
    assert.equal(new Set(sent).size, 25, "every row, once");
    assert.equal(sent.length, 25);
    assert.equal((await kit.kit.plugin("webhooks").deliveries.get(early!.id))?.status, "delivered");
  });
});
