import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { join } from "node:path";
import { memoryStorage } from "../../../adapters/storage/memory/index.ts";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import { WEBHOOKS } from "../../../plugins/webhooks/index.ts";
import { statementsOf } from "../../support/sqlite-statements.ts";
import { withCollectionMethod } from "../../support/storage-wrappers.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";
import type { Json } from "../../support/test-kit.ts";
import type { Storage } from "../../../src/ports/storage.ts";
import { receiversClosedAfterEach, singleOptIn, startWebhookKit, type Receiver, type WebhookKit } from "./support.ts";

let t: WebhookKit | undefined;
const receiver = receiversClosedAfterEach(async () => {
  await t?.stop();
  t = undefined;
});

async function optIn(kit: WebhookKit, phone: string) {
  const answer = await kit.request({ method: "POST", url: "/v1/subscriptions", body: singleOptIn(phone) });
  assert.equal(answer.status, 202, answer.body);
  await kit.scheduler.flush();
}

const phonesOf = (receiver: Receiver) => receiver.requests.map((request) => (request.json as { subscriber: { phone: string } }).subscriber.phone);

/** A memory storage whose webhooks collection counts its finds: the events' reads of a company's webhooks. */
function countingWebhookReads() {
  const reads = { count: 0 };
  const storage = withCollectionMethod(memoryStorage(), "find", (find, collection) => (options) => {
    if (collection === WEBHOOKS) reads.count++;
    return find(options);
  });
  return { storage, reads };
}

describe("an event's webhooks", () => {
  it("are those enabled when it is emitted: webhooks created, changed, disabled, enabled and deleted between events", async () => {
    t = await startWebhookKit();
    const [a, b] = [await receiver(t.signingKey), await receiver(t.signingKey)];
    const first = await t.createWebhook(a.url, ["sms.subscribed"]);
    await optIn(t, "+19148440001");
    const second = await t.createWebhook(b.url, ["sms.subscribed"]);
    await optIn(t, "+19148440002");
    const put = async (id: Json, body: Json) => assert.equal((await t!.request({ method: "PUT", url: `/v1/webhooks/${id}`, body })).status, 200);
    await put(first.id, { events: ["email.subscribed"] });
    await optIn(t, "+19148440003");
    await put(second.id, { disabled: true });
    await optIn(t, "+19148440004");
    await put(second.id, { disabled: false });
    await put(first.id, { events: ["sms.subscribed"] });
    await optIn(t, "+19148440005");
    assert.equal((await t.request({ method: "DELETE", url: `/v1/webhooks/${first.id}` })).status, 204);
    await optIn(t, "+19148440006");
    // A drain disables a webhook that answers 410: the next event has no delivery for it.
    b.answer = () => ({ status: 410 });
    await optIn(t, "+19148440007");
    await optIn(t, "+19148440008");
    assert.deepEqual(phonesOf(a), ["+19148440001", "+19148440002", "+19148440005"]);
    assert.deepEqual(phonesOf(b), ["+19148440002", "+19148440003", "+19148440005", "+19148440006", "+19148440007"]);
    assert.deepEqual((await t.deliveries()).filter((delivery) => delivery.webhookId === second.id).length, 5);
  });

  it("are read once for many events by a process alone on its storage, and at every event by one that shares it", async () => {
    const alone = countingWebhookReads();
    t = await startWebhookKit({ storage: alone.storage });
    const target = await receiver(t.signingKey);
    await t.createWebhook(target.url, ["sms.subscribed"]);
    alone.reads.count = 0;
    for (let n = 0; n < 5; n++) await optIn(t, `+1914844001${n}`);
    assert.equal(target.requests.length, 5);
    assert.equal(alone.reads.count, 1);
    await t.stop();

    const shared = countingWebhookReads();
    t = await startWebhookKit({ storage: shared.storage, config: { jobs: { pollMs: 1_000 } } });
    const other = await receiver(t.signingKey);
    await t.createWebhook(other.url, ["sms.subscribed"]);
    shared.reads.count = 0;
    for (let n = 0; n < 5; n++) await optIn(t, `+1914844002${n}`);
    assert.equal(other.requests.length, 5);
    // Each opt-in emits events for its subscription and for its confirmation text's status: a read for each.
    assert.ok(shared.reads.count >= 5, `${shared.reads.count} reads`);
  });

  it("are written in the change's transaction without a savepoint of their own, and in one of their own for an event emitted outside any", async () => {
    t = await startWebhookKit({ storage: sqliteStorage({ filename: join(temporaryDirectory("webhooks-fan-out"), "db.sqlite") }) });
    const target = await receiver(t.signingKey);
    await t.createWebhook(target.url, ["privacy.request.processed"]);
    const companyId = t.company.companyId as string;
    const emit = (n: number) => t!.kit.events.emit("privacy.request.processed", { companyId, requestId: `r-${n}`, removedRecords: 1, at: 1772366400000 + n });
    // The first event queues the webhook's drain (a job, in a transaction of the jobs' own); the next find it queued.
    await t.kit.storage.transaction(() => emit(0));
    const inTransaction = await statementsOf(() => t!.kit.storage.transaction(() => emit(1)));
    // A write transaction's BEGIN, then the delivery's insert with no savepoint (reads outside one share a plain BEGIN), and
    // no due row: its drain reads it after the webhook's first-attempt cursor.
    const writes = (statements: string[]) => statements.filter((sql) => /^(SAVEPOINT|BEGIN IMMEDIATE|INSERT)/.test(sql)).map((sql) => sql.split(" ").slice(0, 3).join(" "));
    const queued = ["BEGIN IMMEDIATE", 'INSERT INTO "webhooks_deliveries"'];
    assert.deepEqual(writes(inTransaction), queued);
    assert.deepEqual(writes(await statementsOf(() => emit(2))), queued);
    await t.scheduler.flush();
    assert.deepEqual(target.requests.map((request) => (request.json as { privacy_request: { id: string } }).privacy_request.id), ["r-0", "r-1", "r-2"]);
  });

  /** 24 deliveries of one webhook sent by its drain from `storage`: every SQLite statement run on the event loop meanwhile. */
  async function deliverTwentyFour(storage: Storage) {
    t = await startWebhookKit({ storage });
    const target = await receiver(t.signingKey);
    await t.createWebhook(target.url, ["privacy.request.processed"]);
    const companyId = t.company.companyId as string;
    await t.kit.storage.transaction(async () => {
      for (let n = 0; n < 24; n++) await t!.kit.events.emit("privacy.request.processed", { companyId, requestId: `r-${n}`, removedRecords: 1, at: 1772366400000 + n });
    });
    const executed = await statementsOf(() => t!.scheduler.flush());
    assert.equal(target.requests.length, 24);
    assert.deepEqual((await t.deliveries()).map((delivery) => delivery.status), Array(24).fill("delivered"));
    return executed;
  }

  const newDatabase = () => join(temporaryDirectory("webhooks-fan-out"), "db.sqlite");

  it("are delivered with the outcomes of the attempts answered together written by a statement or two (a page of them) and committed together, no delivery's row rewritten", async () => {
    const executed = await deliverTwentyFour(sqliteStorage({ filename: newDatabase() }));
    // No statement per delivery: no due row (first attempts), the outcomes of a group in one outcome page (no outcome
    // row), and the webhook's first-attempt cursor moved over them by one UPDATE.
    assert.deepEqual(executed.filter((sql) => sql.startsWith('UPDATE "webhooks_deliveries"')), []);
    assert.deepEqual(executed.filter((sql) => sql.startsWith('INSERT INTO "webhooks_delivery_outcomes"')), []);
    assert.deepEqual(executed.filter((sql) => /^(INSERT INTO|DELETE FROM) "webhooks_due_deliveries"/.test(sql)), []);
    const moved = executed.filter((sql) => sql.startsWith('UPDATE "webhooks_first_attempt_cursors"'));
    const logged = executed.filter((sql) => sql.startsWith('INSERT INTO "webhooks_outcome_pages"'));
    for (const statements of [moved, logged]) assert.ok(statements.length >= 1 && statements.length <= 12, `${statements.length} statements for 24 deliveries: ${statements[0]}`);
    // A savepoint a group at most (the outcomes' upsert, atomic on its own inside the group's transaction), never one a delivery.
    const groups = executed.filter((sql) => sql.startsWith("BEGIN IMMEDIATE")).length;
    assert.ok(executed.filter((sql) => sql.startsWith("SAVEPOINT")).length <= groups, `${groups} groups`);
  });
});

