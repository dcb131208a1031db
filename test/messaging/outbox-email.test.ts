import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fakeClock } from "../../adapters/clock/index.ts";
import { manualScheduler } from "../../adapters/scheduler/manual/index.ts";
import { memorySms } from "../../adapters/sms/memory/index.ts";
import { memoryStorage } from "../../adapters/storage/memory/index.ts";
import { EmailSendError, createReachkit, silentLogger, type OutboxMessage } from "../../src/index.ts";
import { startTestKit } from "../support/test-kit.ts";

const TO = "jane@example.com";
const email = (companyId: string, extra: Partial<{ idempotencyKey: string; headers: Record<string, string> }> = {}) => ({
  companyId,
  to: TO,
  subject: "Spring sale",
  text: "Everything 20% off",
  html: "<p>Everything <b>20%</b> off</p>",
  kind: "marketing",
  ...extra,
});

describe("messaging outbox: email", () => {
  it("persists an email before sending it, then sends it from the company's name at the configured address", async () => {
    const t = await startTestKit({ config: { messaging: { emailFrom: "news@acme.example" } } });
    const queued = await t.kit.outbox.sendEmail(email(t.company.companyId, { headers: { "List-Unsubscribe": "<https://acme.example/u>" } }));
    assert.equal(queued.status, "queued");
    assert.equal(queued.channel, "email");
    assert.equal(t.email.sent.length, 0, "nothing leaves before the job runs");
    await t.scheduler.flush();
    const [sent] = t.email.sent;
    assert.deepEqual(
      { from: sent!.from, to: sent!.to, subject: sent!.subject, text: sent!.text, html: sent!.html, headers: sent!.headers, key: sent!.idempotencyKey },
      {
        from: '"Acme" <news@acme.example>',
        to: TO,
        subject: "Spring sale",
        text: "Everything 20% off",
        html: "<p>Everything <b>20%</b> off</p>",
        headers: { "List-Unsubscribe": "<https://acme.example/u>" },
        key: queued.id,
      },
    );
    const stored = (await t.kit.outbox.get(queued.id)) as OutboxMessage;
    assert.equal(stored.status, "sent");
    assert.equal(stored.providerMessageId, sent!.providerMessageId);
    assert.equal(stored.inFlightSince, undefined);
    assert.equal(t.sms.sent.length, 0);
    await t.stop();
  });

  it("returns the first email for a repeated idempotency key instead of sending twice", async () => {
    const t = await startTestKit();
    const first = await t.kit.outbox.sendEmail(email(t.company.companyId, { idempotencyKey: "k" }));
    const again = await t.kit.outbox.sendEmail(email(t.company.companyId, { idempotencyKey: "k" }));
    assert.equal(again.id, first.id);
    await t.scheduler.flush();
    assert.equal(t.email.sent.length, 1);
    await t.stop();
  });

  it("refuses headers the adapter writes, malformed names and values with line breaks, storing nothing", async () => {
    const t = await startTestKit();
    const refused: Record<string, string>[] = [{ Subject: "x" }, { "message-id": "<a@b>" }, { "Bad Name": "x" }, { "X-Note": "a\r\nBcc: evil@example.com" }];
    for (const headers of refused) {
      await assert.rejects(() => t.kit.outbox.sendEmail(email(t.company.companyId, { headers })), TypeError, JSON.stringify(headers));
    }
    assert.deepEqual(await t.kit.outbox.list(), []);
    await t.stop();
  });

  it("retries a server that is down and gives up at once on a refused address", async () => {
    const t = await startTestKit();
    t.email.failNext(new EmailSendError("unavailable", "connection refused"));
    const retried = await t.kit.outbox.sendEmail(email(t.company.companyId));
    await t.scheduler.flush();
    assert.equal(t.email.sent.length, 0);
    assert.equal((await t.kit.outbox.get(retried.id))?.inFlightSince, undefined, "the server refused the connection: nothing left");
    await t.scheduler.advance(60_000);
    assert.equal((await t.kit.outbox.get(retried.id))?.status, "sent");
    assert.equal((await t.kit.outbox.get(retried.id))?.attempts, 2);

    t.email.failNext(new EmailSendError("invalid_address", "550 no such mailbox", { providerCode: "550" }));
    const refused = await t.kit.outbox.sendEmail(email(t.company.companyId));
    await t.scheduler.advance(60_000);
    const failed = (await t.kit.outbox.get(refused.id)) as OutboxMessage;
    assert.equal(failed.status, "failed");
    assert.match(failed.reason ?? "", /550 no such mailbox/);
    assert.equal(failed.attempts, 1);
    await t.stop();
  });

  it("never sends twice when the process died while an email was being handed over: it fails as in doubt", async () => {
    const t = await startTestKit();
    const message = await t.kit.outbox.sendEmail(email(t.company.companyId));
    // A crash between the in-flight mark and the outcome: the mark is committed, the job runs again.
    await t.kit.storage.collection<OutboxMessage>("reachkit_outbox").update(message.id, { inFlightSince: t.clock.now() });
    await t.scheduler.flush();
    assert.equal(t.email.sent.length, 0);
    const stored = (await t.kit.outbox.get(message.id)) as OutboxMessage;
    assert.equal(stored.status, "failed");
    assert.match(stored.reason ?? "", /in doubt/);
    await t.stop();
  });

  it("treats a connection lost after the message was handed over as in doubt, and one lost before as safe to retry", async () => {
    const t = await startTestKit();
    t.email.failNext(new EmailSendError("unavailable", "connection lost after DATA", { mayHaveSent: true }));
    const doubtful = await t.kit.outbox.sendEmail(email(t.company.companyId));
    await t.scheduler.flush();
    await t.scheduler.advance(60_000);
    assert.equal(t.email.sent.length, 0);
    assert.equal((await t.kit.outbox.get(doubtful.id))?.status, "failed");
    await t.stop();
  });

  it("fails an email when the kit has no EmailSender", async () => {
    const clock = fakeClock("2026-03-01T12:00:00.000Z");
    const scheduler = manualScheduler(clock);
    const kit = createReachkit({ storage: memoryStorage(), scheduler, clock, sms: memorySms(), logger: silentLogger(), secret: "x".repeat(32) });
    await kit.start();
    const message = await kit.outbox.sendEmail({ companyId: "c1", to: TO, subject: "s", text: "t", kind: "test" });
    await scheduler.flush();
    const stored = (await kit.outbox.get(message.id)) as OutboxMessage;
    assert.equal(stored.status, "failed");
    assert.match(stored.reason ?? "", /no EmailSender/);
    await kit.stop();
  });
});
