import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fakeClock } from "../../../adapters/clock/index.ts";
import { manualScheduler } from "../../../adapters/scheduler/manual/index.ts";
import { smppSms, type SmppSmsOptions } from "../../../adapters/sms/smpp/index.ts";
import { memoryStorage } from "../../../adapters/storage/memory/index.ts";
import { accountsPlugin } from "../../../plugins/accounts/index.ts";
import { subscriptionsPlugin } from "../../../plugins/subscriptions/index.ts";
import { createReachkit, silentLogger, type OutboxMessage } from "../../../src/index.ts";
import { SmscServer } from "../../support/smpp-server.ts";
import { TEST_SECRET } from "../../support/test-kit.ts";
import { waitUntil } from "../../support/wait.ts";

const PHONE = "+19148440001";

/** A kit with the subscriptions plugin whose texts go through the SMPP adapter to an SMSC started here. */
async function smppKit(options: Partial<SmppSmsOptions> = {}) {
  const smsc = await new SmscServer().start();
  const clock = fakeClock("2026-03-01T12:00:00.000Z");
  const scheduler = manualScheduler(clock);
  const kit = createReachkit({
    storage: memoryStorage(),
    scheduler,
    clock,
    sms: smppSms({ url: smsc.url, ...options }),
    logger: silentLogger(),
    secret: TEST_SECRET,
    plugins: [accountsPlugin(), subscriptionsPlugin()],
    config: { rateLimits: { "opt-in": 100 } },
  });
  await kit.start();
  const company = (await kit.provisionCompany({ name: "Acme" })).output as { companyId: string; senderNumber: string };
  const text = async (body: string, to = PHONE) => {
    const message = await kit.outbox.send({ companyId: company.companyId, to, body, kind: "test" });
    await scheduler.flush();
    return message.id;
  };
  const message = async (id: string) => (await kit.outbox.get(id)) as OutboxMessage;
  const eligibility = async () => (await kit.plugin("subscriptions").eligibility(company.companyId, { phone: PHONE })).map((e) => e.eligibility.ineligibilityReason ?? "ELIGIBLE");
  return { smsc, kit, scheduler, company, text, message, eligibility };
}

type SmppKit = Awaited<ReturnType<typeof smppKit>>;

const test = (name: string, body: (t: SmppKit) => Promise<void>, options: Partial<SmppSmsOptions> = {}) =>
  it(name, async () => {
    const t = await smppKit(options);
    try {
      await body(t);
    } finally {
      await t.kit.stop();
      await t.smsc.close();
    }
  });

describe("SMPP SMS adapter in a kit", () => {
  test("submits each text from the company's number with a delivery receipt requested; receipts move it to delivered or undelivered", async (t) => {
    const delivered = await t.text("Acme: hello");
    const undelivered = await t.text("Acme: again");
    assert.deepEqual(
      t.smsc.submitted.map((m) => [m.from, m.to, m.body, m.receiptRequested]),
      [
        [t.company.senderNumber, PHONE, "Acme: hello", true],
        [t.company.senderNumber, PHONE, "Acme: again", true],
      ],
    );
    const [first, second] = t.smsc.submitted;
    assert.equal((await t.message(delivered)).providerMessageId, first!.messageId);
    assert.equal(await t.smsc.deliverReceipt(first!.messageId, "DELIVRD"), 0);
    assert.equal(await t.smsc.deliverReceipt(second!.messageId, "UNDELIV", "011"), 0);
    assert.equal((await t.message(delivered)).status, "delivered");
    const failed = await t.message(undelivered);
    assert.deepEqual([failed.status, failed.errorCode], ["undelivered", "011"]);
  });

  test("a subscriber's STOP in a deliver_sm ends their TEXT subscriptions", async (t) => {
    await t.kit.plugin("subscriptions").optIn(t.company.companyId, { user: { phone: PHONE }, locale: "en-US", subscriptionType: "MARKETING" });
    await t.scheduler.flush();
    assert.deepEqual(await t.eligibility(), ["NOT_FULLY_OPTED_IN"]);
    assert.equal(await t.smsc.deliverText(PHONE, t.company.senderNumber, "STOP"), 0);
    assert.deepEqual(await t.eligibility(), ["OPTED_OUT"]);
  });

  test("an invalid destination fails at once; a throttled submit is retried with backoff", async (t) => {
    t.smsc.refuseNext(0x0b);
    const invalid = await t.text("to nowhere");
    assert.deepEqual([(await t.message(invalid)).status, (await t.message(invalid)).errorCode], ["failed", "0x0000000b"]);
    t.smsc.refuseNext(0x58);
    const throttled = await t.text("later");
    assert.equal((await t.message(throttled)).status, "queued");
    await t.scheduler.advance(1_000);
    assert.equal((await t.message(throttled)).status, "sent");
    assert.equal(t.smsc.submitted.length, 1);
  });

  test("binds again after the gateway drops the connection, and keeps the bind with enquire_link", async (t) => {
    await t.text("before");
    t.smsc.dropConnections();
    await waitUntil("a new bind", () => t.smsc.binds === 2);
    await t.text("after");
    assert.deepEqual(t.smsc.submitted.map((m) => m.body), ["before", "after"]);
    await waitUntil("an enquire_link", () => t.smsc.enquireLinks > 0);
  }, { reconnectMs: { first: 10, max: 100 }, enquireLinkMs: 20 });

  test("a submit that got no answer is not submitted again: the text fails as in doubt", async (t) => {
    t.smsc.refuseNext("drop");
    const id = await t.text("maybe sent");
    assert.equal((await t.message(id)).status, "queued");
    await waitUntil("a new bind", () => t.smsc.binds === 2);
    await t.scheduler.advance(1_000);
    const message = await t.message(id);
    assert.equal(message.status, "failed");
    assert.match(message.reason ?? "", /not submitted again/);
    assert.equal(t.smsc.submitted.length, 1);
  }, { responseTimeoutMs: 100, reconnectMs: { first: 10, max: 100 } });

  test("at most `window` submits await their answer", async (t) => {
    t.smsc.refuseNext("drop", "drop");
    const sending = Promise.all(["one", "two", "three"].map((body) => t.kit.outbox.send({ companyId: t.company.companyId, to: PHONE, body, kind: "test" })));
    await sending;
    const flushing = t.scheduler.flush();
    await waitUntil("two submits", () => t.smsc.submitted.length === 2);
    // The third waits for a place in the window: the first two are never answered until their timeout breaks the bind.
    for (let turn = 0; turn < 50; turn++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(t.smsc.submitted.length, 2);
    await flushing;
    // The two unanswered are in doubt; the third never left, and goes on the next bind.
    await waitUntil("a new bind", () => t.smsc.binds === 2);
    await t.scheduler.advance(1_000);
    assert.deepEqual(t.smsc.submitted.map((m) => m.body), ["one", "two", "three"]);
  }, { window: 2, responseTimeoutMs: 300, reconnectMs: { first: 10, max: 100 } });
});
