import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { OUTBOX_DRAIN_JOB, SmsSendError, type OutboxMessage } from "../../src/index.ts";
import { memoryStorage } from "../../adapters/storage/memory/index.ts";
import { sqliteStorage } from "../../adapters/storage/sqlite/index.ts";
import { OUTBOX_COLLECTION } from "../../src/messaging/outbox-record.ts";
import { withCollectionMethod } from "../support/storage-wrappers.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";
import { startTestKit } from "../support/test-kit.ts";

const TO = "+15555550100";

describe("messaging outbox", () => {
  it("persists a message before sending it, then sends it from the company's sender", async () => {
    const t = await startTestKit();
    await t.kit.plugin("accounts").updateCompany(t.company.companyId, { senderNumber: "+15551230000" });
    const queued = await t.kit.outbox.send({ companyId: t.company.companyId, to: TO, body: "Acme: hello", kind: "test" });
    assert.equal(queued.status, "queued");
    assert.equal(t.sms.sent.length, 0, "nothing leaves before the job runs");
    await t.scheduler.flush();
    assert.deepEqual(
      t.sms.sent.map((m) => [m.from, m.to, m.body]),
      [["+15551230000", TO, "Acme: hello"]],
    );
    const sent = (await t.kit.outbox.get(queued.id)) as OutboxMessage;
    assert.equal(sent.status, "sent");
    assert.equal(sent.providerMessageId, t.sms.sent[0]!.providerMessageId);
    assert.equal(sent.sentAt, t.clock.now());
    await t.stop();
  });

  it("sends from the company the caller read, and never from another company given in its place", async () => {
    const t = await startTestKit();
    const accounts = t.kit.plugin("accounts");
    const own = (await accounts.updateCompany(t.company.companyId, { senderNumber: "+15551230000" }))!;
    const other = (await accounts.getCompany((await t.kit.provisionCompany({ name: "Other" })).company.id))!;
    await t.kit.outbox.send({ companyId: own.id, to: TO, body: "read by the caller", kind: "test", company: own });
    await t.kit.outbox.send({ companyId: own.id, to: TO, body: "another's company", kind: "test", company: other });
    await t.scheduler.flush();
    assert.deepEqual(t.sms.sent.map((m) => [m.from, m.body]), [["+15551230000", "read by the caller"], ["+15551230000", "another's company"]]);
    await t.stop();
  });

  it("sends an MMS with its media URL, and falls back to the default sender", async () => {
    const t = await startTestKit();
    // Provisioning gives the company a sender number; a company without one uses the default.
    await t.kit.plugin("accounts").updateCompany(t.company.companyId, { senderNumber: undefined });
    await t.kit.outbox.send({ companyId: t.company.companyId, to: TO, body: "pic", mediaUrl: "https://example.com/a.png", kind: "test" });
    await t.scheduler.flush();
    assert.equal(t.sms.sent[0]!.mediaUrl, "https://example.com/a.png");
    assert.equal(t.sms.sent[0]!.from, t.kit.config.messaging.defaultSender);
    await t.stop();
  });

  it("returns the first message for a repeated idempotency key instead of sending twice", async () => {
    const t = await startTestKit();
    const first = await t.kit.outbox.send({ companyId: t.company.companyId, to: TO, body: "once", kind: "test", idempotencyKey: "k" });
    const again = await t.kit.outbox.send({ companyId: t.company.companyId, to: TO, body: "once", kind: "test", idempotencyKey: "k" });
    assert.equal(again.id, first.id);
    await t.scheduler.flush();
    assert.equal(t.sms.sent.length, 1);
    await t.stop();
  });

  it("suppresses the same body to the same number within the duplicate window, and records it", async () => {
    const t = await startTestKit();
    const send = () => t.kit.outbox.send({ companyId: t.company.companyId, to: TO, body: "Your code is 1234", kind: "transactional", suppressDuplicates: true });
    assert.equal((await send()).status, "queued");
    const duplicate = await send();
    assert.equal(duplicate.status, "suppressed");
    assert.match(duplicate.reason ?? "", /duplicate/);
    t.clock.advance(t.kit.config.messaging.duplicateWindowMs + 1);
    assert.equal((await send()).status, "queued");
    await t.scheduler.flush();
    assert.equal(t.sms.sent.length, 2);
    assert.deepEqual((await t.kit.outbox.list({ to: TO })).map((m) => m.status), ["sent", "suppressed", "sent"]);
    await t.stop();
  });

  for (const [name, storage] of [
    ["in memory", () => memoryStorage()],
    ["on SQLite", () => sqliteStorage({ filename: join(temporaryDirectory("outbox-repeats"), "reachkit.db") })],
  ] as const) {
    it(`suppresses a repeat only after a message of its kind or body went or is going to that number (${name})`, async () => {
      const t = await startTestKit({ storage: storage() });
      const { companyId } = t.company;
      const repeat = (to: string, kind: string) => t.kit.outbox.send({ companyId, to, body: `a ${kind}`, kind, onePerKindWithinMs: 60_000 });
      const duplicate = (body: string) => t.kit.outbox.send({ companyId, to: TO, body, kind: "code", suppressDuplicates: true });
      // A text that failed did not go: the next one of its kind may.
      t.sms.failNext(new SmsSendError("invalid_number", "landline"));
      const failing = await repeat(TO, "opt_in");
      await t.scheduler.flush();
      assert.equal((await t.kit.outbox.get(failing.id))?.status, "failed");
      assert.equal((await repeat(TO, "opt_in")).status, "queued");
      assert.equal((await repeat(TO, "welcome")).status, "queued", "another kind");
      assert.equal((await repeat("+15555550199", "opt_in")).status, "queued", "another number");
      for (let attempt = 0; attempt < 3; attempt++) assert.equal((await repeat(TO, "opt_in")).status, "suppressed");
      assert.equal((await duplicate("code 1")).status, "queued");
      assert.equal((await duplicate("code 2")).status, "queued", "another body");
      assert.equal((await duplicate("code 1")).status, "suppressed");
      await t.stop();
    });
  }

  it("retries a provider outage and gives up at once on an invalid number", async () => {
    const t = await startTestKit();
    t.sms.failNext(new SmsSendError("unavailable", "provider down"));
    const retried = await t.kit.outbox.send({ companyId: t.company.companyId, to: TO, body: "eventually", kind: "test" });
    await t.scheduler.flush();
    assert.equal(t.sms.sent.length, 0);
    await t.scheduler.advance(60_000);
    assert.equal((await t.kit.outbox.get(retried.id))?.status, "sent");
    assert.equal((await t.kit.outbox.get(retried.id))?.attempts, 2);

    t.sms.failNext(new SmsSendError("invalid_number", "landline"));
    const refused = await t.kit.outbox.send({ companyId: t.company.companyId, to: TO, body: "never", kind: "test" });
    await t.scheduler.advance(60_000);
    const failed = (await t.kit.outbox.get(refused.id)) as OutboxMessage;
    assert.equal(failed.status, "failed");
    assert.equal(failed.reason, "landline");
    assert.equal(failed.attempts, 1);
    await t.stop();
  });

  it("queues a sender's texts with one drain job, which ends once they are sent; a text after it queues the next", async () => {
    const t = await startTestKit();
    const drains = () => t.kit.jobs.list({ type: OUTBOX_DRAIN_JOB });
    for (const body of ["one", "two", "three"]) await t.kit.outbox.send({ companyId: t.company.companyId, to: TO, body, kind: "test" });
    const from = t.sms.sent[0]?.from ?? (await t.kit.outbox.list())[0]!.from;
    assert.deepEqual((await drains()).map((job) => [job.key, job.status, job.payload]), [[`outbox-drain:sms:${from}`, "queued", { channel: "sms", from }]]);
    await t.scheduler.flush();
    assert.deepEqual(t.sms.sentTo(TO).map((m) => m.body), ["one", "two", "three"]);
    assert.deepEqual((await t.kit.outbox.list()).map((m) => [m.status, m.dueAt, m.attempts]), Array(3).fill(["sent", undefined, 1]));
    assert.deepEqual((await drains()).map((job) => job.status), ["done"]);
    await t.kit.outbox.send({ companyId: t.company.companyId, to: TO, body: "four", kind: "test" });
    assert.deepEqual((await drains()).map((job) => job.status), ["done", "queued"]);
    await t.scheduler.flush();
    assert.deepEqual(t.sms.sentTo(TO).map((m) => m.body), ["one", "two", "three", "four"]);
    await t.stop();
  });

  it("never sends twice when a crash loses the record of a send", async () => {
    const t = await startTestKit();
    const message = await t.kit.outbox.send({ companyId: t.company.companyId, to: TO, body: "exactly once", kind: "test" });
    await t.scheduler.flush();
    // A crash after the provider accepted the SMS but before the commit leaves the message queued, in flight, due again.
    await t.kit.storage.collection<OutboxMessage>(OUTBOX_COLLECTION).update(message.id, { status: "queued", providerMessageId: undefined, inFlightSince: t.clock.now(), dueAt: t.clock.now() });
    await t.kit.outbox.send({ companyId: t.company.companyId, to: TO, body: "the next", kind: "test" });
    await t.scheduler.flush();
    assert.deepEqual(t.sms.sentTo(TO).map((m) => m.body), ["exactly once", "the next"]);
    assert.equal((await t.kit.outbox.get(message.id))?.status, "sent");
    await t.stop();
  });

  it("lists newest last, per recipient or company, and deletes a recipient's messages", async () => {
    const t = await startTestKit();
    for (const [to, body] of [[TO, "one"], ["+15555550199", "other"], [TO, "two"]] as const) {
      await t.kit.outbox.send({ companyId: t.company.companyId, to, body, kind: "test" });
      t.clock.advance(1000);
    }
    assert.deepEqual((await t.kit.outbox.list({ to: TO })).map((m) => m.body), ["one", "two"]);
    assert.deepEqual((await t.kit.outbox.list({ limit: 2 })).map((m) => m.body), ["other", "two"]);
    assert.equal(await t.kit.outbox.deleteForRecipient(t.company.companyId, TO), 2);
    assert.deepEqual((await t.kit.outbox.list({ companyId: t.company.companyId })).map((m) => m.body), ["other"]);
    await t.stop();
  });

  it("sends texts in the order they were queued, even when reading the first one takes longer", async () => {
    // A networked database can answer a later read first; the texts must still leave in order.
    let reads = 0;
    const storage = withCollectionMethod(memoryStorage(), "find", (find, collection) =>
      collection !== OUTBOX_COLLECTION
        ? find
        : async (options) => {
            await new Promise((resolve) => setTimeout(resolve, reads++ === 0 ? 30 : 0));
            return find(options);
          },
    );
    const t = await startTestKit({ storage });
    await t.kit.outbox.send({ companyId: t.company.companyId, to: TO, body: "booked", kind: "test" });
    await t.kit.outbox.send({ companyId: t.company.companyId, to: TO, body: "canceled", kind: "test" });
    await t.scheduler.flush();
    assert.deepEqual(t.sms.sentTo(TO).map((m) => m.body), ["booked", "canceled"]);
    await t.stop();
  });
});
