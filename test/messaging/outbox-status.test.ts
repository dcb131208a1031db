import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { memorySms } from "../../adapters/sms/memory/index.ts";
import { SmsSendError, type MessageStatusEvent, type OutboundSms, type OutboxMessage, type RecipientOptedOutEvent } from "../../src/index.ts";
import { startTestKit, type TestKit } from "../support/test-kit.ts";

const TO = "+15555550100";

function recordEvents(t: TestKit) {
  const statuses: MessageStatusEvent[] = [];
  const optOuts: RecipientOptedOutEvent[] = [];
  t.kit.events.on("message.status_changed", (event) => void statuses.push(event));
  t.kit.events.on("sms.recipient_opted_out", (event) => void optOuts.push(event));
  return { statuses, optOuts };
}

/** The memory provider's send, watched: every attempt it gets, in order; `before` may fail one (by its number, from 1). */
function recordAttempts(t: TestKit, before: (attempt: number) => void = () => undefined): OutboundSms[] {
  const attempts: OutboundSms[] = [];
  const original = t.sms.send.bind(t.sms);
  t.sms.send = async (message) => {
    attempts.push(message);
    before(attempts.length);
    return original(message);
  };
  return attempts;
}

const sendOne = async (t: TestKit, body = "hello") => {
  const message = await t.kit.outbox.send({ companyId: t.company.companyId, to: TO, body, kind: "test" });
  await t.scheduler.flush();
  return message.id;
};

describe("outbox delivery status", () => {
  it("moves a message queued → sent → delivered on the provider's receipts and announces each move", async () => {
    const t = await startTestKit();
    const { statuses } = recordEvents(t);
    const id = await sendOne(t);
    const providerId = t.sms.sent[0]!.providerMessageId;
    t.clock.advance(5_000);
    await t.sms.reportStatus(providerId, "delivered");
    const message = (await t.kit.outbox.get(id)) as OutboxMessage;
    assert.equal(message.status, "delivered");
    assert.equal(message.deliveredAt, t.clock.now());
    assert.deepEqual(
      statuses.map((event) => [event.channel, event.messageId, event.previousStatus, event.status, event.providerMessageId]),
      [
        ["sms", id, "queued", "sent", providerId],
        ["sms", id, "sent", "delivered", providerId],
      ],
    );
    await t.stop();
  });

  it("never moves a message back: a late or repeated receipt changes nothing and announces nothing", async () => {
    const t = await startTestKit();
    const id = await sendOne(t);
    const providerId = t.sms.sent[0]!.providerMessageId;
    await t.sms.reportStatus(providerId, "undelivered", "30003");
    const { statuses } = recordEvents(t);
    await t.sms.reportStatus(providerId, "sent");
    await t.sms.reportStatus(providerId, "delivered");
    await t.sms.reportStatus(providerId, "undelivered", "30003");
    const message = (await t.kit.outbox.get(id)) as OutboxMessage;
    assert.equal(message.status, "undelivered");
    assert.equal(message.errorCode, "30003");
    assert.deepEqual(statuses, []);
    await t.stop();
  });

  it("finds a receipt's message by the provider's id when the receipt does not name it", async () => {
    const t = await startTestKit();
    const id = await sendOne(t);
    await t.kit.outbox.applyReceipt({ providerMessageId: t.sms.sent[0]!.providerMessageId, status: "delivered" });
    assert.equal((await t.kit.outbox.get(id))?.status, "delivered");
    // Another provider message (not this outbox's) is ignored.
    await t.kit.outbox.applyReceipt({ providerMessageId: "unknown", status: "failed" });
    await t.stop();
  });

  it("a receipt that overtakes the send's own commit wins: the message stays delivered", async () => {
    const sms = memorySms();
    const t = await startTestKit({ sms });
    const original = sms.send.bind(sms);
    // The provider's callback arrives before the adapter's answer does.
    sms.send = async (message: OutboundSms) => {
      const sent = await original(message);
      await sms.reportStatus(sent.providerMessageId, "delivered");
      return sent;
    };
    const id = await sendOne(t);
    const message = (await t.kit.outbox.get(id)) as OutboxMessage;
    assert.equal(message.status, "delivered");
    assert.equal(message.inFlightSince, undefined);
    await t.stop();
  });

  it("records the provider's error code of a refusal; an opted-out recipient is announced once the message failed", async () => {
    const t = await startTestKit();
    const { statuses, optOuts } = recordEvents(t);
    t.sms.failNext(new SmsSendError("opted_out", "Attempt to send to unsubscribed recipient", { providerCode: "21610" }));
    const id = await sendOne(t);
    const message = (await t.kit.outbox.get(id)) as OutboxMessage;
    assert.equal(message.status, "failed");
    assert.equal(message.errorCode, "21610");
    assert.equal(message.attempts, 1);
    assert.deepEqual(statuses.map((event) => [event.status, event.errorCode]), [["failed", "21610"]]);
    assert.deepEqual(
      optOuts.map((event) => [event.companyId, event.phone, event.from, event.messageId, event.errorCode]),
      [[t.company.companyId, TO, message.from, id, "21610"]],
    );
    await t.stop();
  });

  it("an attempt after one that may have reached the provider tells the adapter when that one started", async () => {
    const t = await startTestKit();
    const attempts = recordAttempts(t, (attempt) => {
      if (attempt === 1) throw new Error("socket hang up");
    });
    const firstAttemptAt = t.clock.now();
    const id = await sendOne(t);
    assert.equal((await t.kit.outbox.get(id))?.inFlightSince, firstAttemptAt, "in flight while the outcome is unknown");
    await t.scheduler.advance(60_000);
    assert.deepEqual(attempts.map((attempt) => attempt.earlierAttemptAt), [undefined, firstAttemptAt]);
    const message = (await t.kit.outbox.get(id)) as OutboxMessage;
    assert.equal(message.status, "sent");
    assert.equal(message.inFlightSince, undefined);
    await t.stop();
  });

  it("a refusal the provider answered leaves nothing in doubt: the retry sends without asking", async () => {
    const t = await startTestKit();
    const attempts = recordAttempts(t);
    t.sms.failNext(new SmsSendError("rate_limited", "Too Many Requests", { providerCode: "20429" }));
    await sendOne(t);
    await t.scheduler.advance(60_000);
    assert.deepEqual(attempts.map((attempt) => attempt.earlierAttemptAt), [undefined, undefined]);
    assert.equal(t.sms.sent.length, 1);
    await t.stop();
  });

  it("an adapter that cannot tell whether an attempt in doubt was sent fails the message, never sending it twice", async () => {
    const t = await startTestKit();
    let calls = 0;
    t.sms.send = async (message) => {
      calls++;
      if (message.earlierAttemptAt !== undefined) throw new SmsSendError("in_doubt", "the earlier attempt may have been sent");
      throw new Error("connection reset after the request left");
    };
    const id = await sendOne(t);
    await t.scheduler.advance(60_000);
    const message = (await t.kit.outbox.get(id)) as OutboxMessage;
    assert.equal(message.status, "failed");
    assert.equal(message.reason, "the earlier attempt may have been sent");
    assert.equal(calls, 2);
    await t.stop();
  });
});
