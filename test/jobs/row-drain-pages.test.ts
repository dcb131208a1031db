import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { memoryStorage } from "../../adapters/storage/memory/index.ts";
import { DELIVERIES, type DeliveryRecord } from "../../plugins/webhooks/index.ts";
import { DUE_DELIVERIES, type DueDelivery } from "../../plugins/webhooks/records.ts";
import type { Storage } from "../../src/index.ts";
import { receiversClosedAfterEach, singleOptIn, startWebhookKit, type WebhookKit } from "../plugins/webhooks/support.ts";
import { withCollectionMethod } from "../support/storage-wrappers.ts";

const DELIVERY_COUNT = 96;

let t: WebhookKit | undefined;
const receiver = receiversClosedAfterEach(async () => {
  await t?.stop();
  t = undefined;
});

/** `storage` whose drains' page reads of the deliveries' due rows (due-by-now reads) report the rows they return. */
function countingPageReads(storage: Storage, read: (rows: readonly DueDelivery[]) => void): Storage {
  return withCollectionMethod(storage, "find", (find, name) =>
    name !== DUE_DELIVERIES
      ? find
      : async (query) => {
          const page = await find(query);
          if ((query?.where as { dueAt?: { lte?: number } } | undefined)?.dueAt?.lte !== undefined) read(page.items as DueDelivery[]);
          return page;
        },
  );
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
    // Each row once, and at the end of the queue the rows still out, read again by the reads from its head: those whose
    // request is out, and those answered whose outcomes are still gathered (up to 40 ms) before their write. 100-121 rows
    // here on a quiet machine; reading every page from the head, as the drains did before they read on, gave 184-190.
    assert.ok(read.length >= DELIVERY_COUNT && read.length <= DELIVERY_COUNT * 1.5, `${read.length} rows read for ${DELIVERY_COUNT} deliveries`);
  });

  it("a row that became due before the rows already read (another process's clock) is still sent, once", async () => {
    t = await startWebhookKit({ webhooks: { concurrencyPerReceiver: 1 } });
    const kit = t;
    const receiving = await receiver(kit.signingKey);
    await kit.createWebhook(receiving.url, ["sms.subscribed"]);
    let early: DeliveryRecord | undefined;
    receiving.answer = async () => {
      if (early === undefined) {
        // Stored by a process whose clock lags: due before every row of the queue, while the drain reads on from its last page.
        const [first] = await kit.deliveries();
        const { dueAt, ...delivery } = first!;
        early = { ...delivery, id: "msg_0000early", body: '{"early":true}', status: "pending", attempts: 0, createdAt: first!.createdAt - 60_000 };
        await kit.kit.storage.transaction(async () => {
          await kit.kit.storage.collection<DeliveryRecord>(DELIVERIES).insert(early!);
          await kit.kit.storage.collection<DueDelivery>(DUE_DELIVERIES).insert({ id: early!.id, webhookId: early!.webhookId, dueAt: dueAt! - 60_000, attempts: 0, body: early!.body });
        });
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
