import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { OUTBOX_DRAIN_JOB, OUTBOX_SEND_JOB, SmsSendError, type JobRecord, type OutboxMessage } from "../../src/index.ts";
import { memoryStorage } from "../../adapters/storage/memory/index.ts";
import { sqliteStorage } from "../../adapters/storage/sqlite/index.ts";
import { memorySms, type MemorySms } from "../../adapters/sms/memory/index.ts";
import { fakeClock } from "../../adapters/clock/index.ts";
import { JOBS_COLLECTION, jobsCollection } from "../../src/jobs/job-record.ts";
import { OUTBOX_COLLECTION, outboxCollection } from "../../src/messaging/outbox-record.ts";
import { withCollectionMethod } from "../support/storage-wrappers.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";
import { startTestKit, type TestKit } from "../support/test-kit.ts";

const TO = "+15555550100";
const UNLIMITED = { messaging: { ratePerSecond: Infinity } };

const send = (t: TestKit, body: string, companyId = t.company.companyId) => t.kit.outbox.send({ companyId, to: TO, body, kind: "test" });

describe("a sender's drain", () => {
  it("sends a text committed while the drain reads for the last time: the read and the drain's end are one transaction", async () => {
    let lastReadDone!: () => void;
    const lastRead = new Promise<void>((resolve) => (lastReadDone = resolve));
    let watching = false;
    // The drain's last read (any message of its sender still queued) lets a new text start: it commits before
    // the drain's end unless the read and the end hold the storage together.
    const storage = withCollectionMethod(memoryStorage(), "findOne", (findOne, collection) =>
      collection !== OUTBOX_COLLECTION
        ? findOne
        : async (where, orderBy) => {
            const found = await findOne(where, orderBy);
            if (watching && (where as { dueAt?: { exists?: boolean } }).dueAt?.exists === true) {
              watching = false;
              lastReadDone();
              // The text's transaction runs as far as it can before this read answers.
              for (let turn = 0; turn < 50; turn++) await new Promise((resolve) => setImmediate(resolve));
            }
            return found;
          },
    );
    const t = await startTestKit({ storage, config: UNLIMITED });
    await send(t, "first");
    watching = true;
    // Started here, outside the drain's transaction, once the read is done.
    const sending = lastRead.then(() => send(t, "committed meanwhile"));
    await t.scheduler.flush();
    await sending;
    await t.scheduler.flush();
    assert.deepEqual(t.sms.sentTo(TO).map((m) => m.body), ["first", "committed meanwhile"]);
    assert.deepEqual((await t.kit.outbox.list()).map((m) => m.status), ["sent", "sent"]);
    await t.stop();
  });

  it("waits the jobs' backoff before a retry, and fails a text after the last attempt", async () => {
    const t = await startTestKit({ config: { ...UNLIMITED, jobs: { backoffBaseMs: 10_000, maxAttempts: 3 } } });
    t.sms.failNext(new SmsSendError("unavailable", "provider down"));
    const retried = await send(t, "eventually");
    await t.scheduler.flush();
    assert.equal(t.sms.sent.length, 0);
    const waiting = (await t.kit.outbox.get(retried.id))!;
    assert.deepEqual([waiting.status, waiting.attempts, waiting.reason, waiting.dueAt], ["queued", 1, "provider down", t.clock.now() + 10_000]);
    await t.scheduler.advance(9_999);
    assert.equal(t.sms.sent.length, 0, "not before its backoff");
    await t.scheduler.advance(1);
    assert.deepEqual(t.sms.sentTo(TO).map((m) => m.body), ["eventually"]);
    assert.deepEqual([(await t.kit.outbox.get(retried.id))!.status, (await t.kit.outbox.get(retried.id))!.attempts], ["sent", 2]);

    for (let i = 0; i < 3; i++) t.sms.failNext(new SmsSendError("unavailable", `down ${i + 1}`));
    const given = await send(t, "never");
    await t.scheduler.flush();
    await t.scheduler.advance(10_000);
    await t.scheduler.advance(20_000);
    const failed = (await t.kit.outbox.get(given.id))!;
    assert.deepEqual([failed.status, failed.attempts, failed.reason, failed.dueAt], ["failed", 3, "down 3", undefined]);
    assert.deepEqual(t.sms.sentTo(TO).map((m) => m.body), ["eventually"]);
    await t.stop();
  });

  it("sends a sender's texts in the order they were queued, a retried one in its due time's place", async () => {
    const t = await startTestKit({ config: { ...UNLIMITED, jobs: { backoffBaseMs: 1_000 } } });
    t.sms.failNext(new SmsSendError("unavailable", "provider down"));
    await send(t, "1");
    await t.scheduler.flush();
    for (const body of ["2", "3"]) await send(t, body);
    await t.scheduler.flush();
    assert.deepEqual(t.sms.sentTo(TO).map((m) => m.body), ["2", "3"], "the drain queued for the retry moved to the new texts' time");
    await t.scheduler.advance(1_000);
    assert.deepEqual(t.sms.sentTo(TO).map((m) => m.body), ["2", "3", "1"]);
    await t.stop();
  });

  it("an email's drain is its From's: an email in doubt after a crash is failed, never sent again", async () => {
    const t = await startTestKit();
    const sent = await t.kit.outbox.sendEmail({ companyId: t.company.companyId, to: "ann@example.com", subject: "Hi", text: "hello", kind: "test" });
    const inDoubt = await t.kit.outbox.sendEmail({ companyId: t.company.companyId, to: "bob@example.com", subject: "Hi", text: "hello", kind: "test" });
    // A process stopped after marking it in flight: due again, in doubt.
    await t.kit.storage.collection<OutboxMessage>(OUTBOX_COLLECTION).update(inDoubt.id, { inFlightSince: t.clock.now(), attempts: 1 });
    await t.scheduler.flush();
    assert.deepEqual(t.email.sent.map((m) => m.to), ["ann@example.com"]);
    assert.equal((await t.kit.outbox.get(sent.id))!.status, "sent");
    assert.deepEqual([(await t.kit.outbox.get(inDoubt.id))!.status, (await t.kit.outbox.get(inDoubt.id))!.errorCode], ["failed", "in_doubt"]);
    assert.deepEqual((await t.kit.jobs.list({ type: OUTBOX_DRAIN_JOB })).map((job) => job.key), [`outbox-drain:email:${sent.from}`]);
    await t.stop();
  });

  it("on stop, sends what it handed over, stops reading, and goes on at the next start", async () => {
    const filename = join(temporaryDirectory("outbox-drain-stop"), "reachkit.db");
    const memory = memorySms();
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const slow: MemorySms = { ...memory, send: async (message) => (await answered, memory.send(message)) };
    const config = { messaging: { ratePerSecond: Infinity, sendsAtOnce: 1 } };
    const t = await startTestKit({ storage: sqliteStorage({ filename }), sms: slow, config });
    for (let i = 1; i <= 5; i++) await send(t, `text ${i}`);
    void t.scheduler.flush();
    await until(async () => (await t.kit.outbox.list()).some((m) => m.inFlightSince !== undefined), "a text in flight");
    const stopping = t.kit.stop();
    for (let turn = 0; turn < 50; turn++) await new Promise((resolve) => setImmediate(resolve));
    answer();
    await stopping;
    // A page of two (sendsAtOnce 1): the text with the provider and the one waiting its turn.
    assert.deepEqual(memory.sent.map((m) => m.body), ["text 1", "text 2"]);
    const again = await startTestKit({ storage: sqliteStorage({ filename }), sms: memory, config, bare: true });
    await again.scheduler.flush();
    assert.deepEqual(memory.sent.map((m) => m.body), ["text 1", "text 2", "text 3", "text 4", "text 5"]);
    assert.deepEqual((await again.kit.jobs.list({ type: OUTBOX_DRAIN_JOB })).map((job) => [job.status, job.attempts]), [["done", 1]], "one drain: requeued at the stop, without using an attempt");
    await again.stop();
  });
});

describe("two processes on one database", () => {
  it("never send a sender's texts at once, nor one twice", async () => {
    const storage = memoryStorage();
    const clock = fakeClock("2026-03-01T12:00:00.000Z");
    const sent: Array<{ body: string; by: string }> = [];
    const sending = new Set<string>();
    let overlaps = 0;
    const smsOf = (by: string): MemorySms => {
      const memory = memorySms();
      return {
        ...memory,
        async send(message) {
          sending.add(by);
          if (sending.size > 1) overlaps++;
          for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
          sending.delete(by);
          sent.push({ body: message.body, by });
          return memory.send(message);
        },
      };
    };
    const config = { messaging: { ratePerSecond: Infinity, sendsAtOnce: 2 }, jobs: { pollMs: 1_000 } };
    const a = await startTestKit({ storage, clock, sms: smsOf("a"), config });
    const b = await startTestKit({ storage, clock, sms: smsOf("b"), config, bare: true });
    const bodies: string[] = [];
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 5; i++) {
        const body = `round ${round} text ${i}`;
        bodies.push(body);
        await send(i % 2 === 0 ? a : b, body, a.company.companyId);
      }
      // Each process wakes first in turn.
      const [first, second] = round % 2 === 0 ? [a, b] : [b, a];
      await Promise.all([first.scheduler.advance(1_000), second.scheduler.advance(1_000)]);
    }
    for (let poll = 0; poll < 5; poll++) await Promise.all([a.scheduler.advance(1_000), b.scheduler.advance(1_000)]);
    assert.deepEqual(sent.map((text) => text.body), bodies, "each once, in order");
    assert.equal(overlaps, 0, "never both processes at once");
    assert.ok(new Set(sent.map((text) => text.by)).size === 2, "both processes drained");
    await a.stop();
    await b.stop();
  });
});

describe("a database from before the drains", () => {
  it("sends a message whose send job was queued before, once", async () => {
    const filename = join(temporaryDirectory("outbox-upgrade"), "reachkit.db");
    // The outbox and jobs as an earlier version made them: no dueAt column, one send job per message.
    const before = sqliteStorage({ filename });
    await before.ensureCollections([jobsCollection, { ...outboxCollection, indexes: outboxCollection.indexes!.filter((index) => !index.fields.includes("dueAt")) }]);
    const now = Date.parse("2026-03-01T12:00:00.000Z");
    const message = (id: string, status: OutboxMessage["status"]): OutboxMessage => ({
      id, companyId: "c1", to: TO, from: "+15550000000", body: `${status} before`, kind: "test", status, idempotencyKey: id, attempts: 0, createdAt: now, updatedAt: now,
    });
    const job = (id: string, messageId: string): JobRecord => ({
      id, type: OUTBOX_SEND_JOB, lane: OUTBOX_SEND_JOB, key: null, activeKey: null, companyId: "c1", payload: { messageId }, status: "queued",
      runAt: now, attempts: 0, maxAttempts: 5, leaseUntil: null, lastError: null, createdAt: now, updatedAt: now, finishedAt: null,
    });
    await before.collection<OutboxMessage>(OUTBOX_COLLECTION).insert(message("m1", "queued"));
    await before.collection<OutboxMessage>(OUTBOX_COLLECTION).insert(message("m2", "sent"));
    await before.collection<JobRecord>(JOBS_COLLECTION).insert(job("j1", "m1"));
    await before.collection<JobRecord>(JOBS_COLLECTION).insert(job("j2", "m2"));
    await before.close?.();

    const t = await startTestKit({ storage: sqliteStorage({ filename }), config: UNLIMITED, bare: true });
    await t.scheduler.flush();
    assert.deepEqual(t.sms.sent.map((m) => m.body), ["queued before"]);
    assert.equal((await t.kit.outbox.get("m1"))!.status, "sent");
    assert.deepEqual((await t.kit.jobs.list({ type: OUTBOX_SEND_JOB })).map((done) => done.status), ["done", "done"]);
    await t.scheduler.advance(120_000);
    assert.equal(t.sms.sent.length, 1, "once");
    await t.stop();
  });
});

/** Lets the event loop turn until `condition` holds (a bounded number of turns, no clock). */
async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let turn = 0; turn < 2_000; turn++) {
    if (await condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.fail(`never: ${what}`);
}
