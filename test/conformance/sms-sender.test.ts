import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import assert from "node:assert/strict";
import { it } from "node:test";
import { fakeClock } from "../../adapters/clock/index.ts";
import { manualScheduler } from "../../adapters/scheduler/manual/index.ts";
import { consoleSms } from "../../adapters/sms/console/index.ts";
import { fileSms } from "../../adapters/sms/file/index.ts";
import { memorySms } from "../../adapters/sms/memory/index.ts";
import { smppSms } from "../../adapters/sms/smpp/index.ts";
import { memoryStorage } from "../../adapters/storage/memory/index.ts";
import { createReachkit, SmsSendError, silentLogger, type SmsSender } from "../../src/index.ts";
import { smsSenderConformance, type RefusalKind } from "../../src/testkit/index.ts";
import { MessagesApi, type ApiFailure } from "../support/messages-api.ts";
import { SmscServer } from "../support/smpp-server.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";
import { TEST_SECRET } from "../support/test-kit.ts";
import { servedTwilioKit } from "../support/twilio-kit.ts";

const ALL_REFUSALS: readonly RefusalKind[] = ["invalid_number", "opted_out", "rate_limited", "unavailable"];

smsSenderConformance(
  "memory",
  () => {
    const sender = memorySms();
    return {
      sender,
      deliveredCount: () => sender.sent.length,
      // The instance is the provider: a restarted kit in a test keeps it.
      reopen: () => sender,
      refuseNext: (kind) => sender.failNext(new SmsSendError(kind, `refused: ${kind}`)),
      reportStatus: (id, status, errorCode) => sender.reportStatus(id, status, errorCode),
      deliverInbound: (text) => sender.deliverInbound(text),
    };
  },
  { mms: true, findsEarlierSends: true, refusals: ALL_REFUSALS, receipts: true, inbound: "push" },
);

smsSenderConformance(
  "console",
  () => {
    const lines: string[] = [];
    const write = (line: string) => void lines.push(line);
    return { sender: consoleSms({ write }), deliveredCount: () => lines.length, reopen: () => consoleSms({ write }) };
  },
  { mms: true, findsEarlierSends: false, refusals: [], receipts: false, inbound: "none" },
);

const sentLines = (path: string) => readFileSync(path, "utf8").split("\n").filter((line) => line !== "");

smsSenderConformance(
  "file",
  () => {
    const path = join(temporaryDirectory("file-sms"), "sent.jsonl");
    return { sender: fileSms({ path }), deliveredCount: () => sentLines(path).length, reopen: () => fileSms({ path }) };
  },
  { mms: true, findsEarlierSends: true, refusals: [], receipts: false, inbound: "none" },
);

/** Twilio's answers for each refusal: its HTTP status and error code. */
const TWILIO_REFUSALS: Readonly<Record<RefusalKind, ApiFailure>> = {
  invalid_number: { status: 400, code: 21211, message: "The 'To' number is not a valid phone number." },
  opted_out: { status: 400, code: 21610, message: "Attempt to send to unsubscribed recipient" },
  rate_limited: { status: 429, code: 20429, message: "Too Many Requests" },
  unavailable: { status: 503, message: "Service Unavailable" },
};

smsSenderConformance(
  "twilio (against a local Messages API)",
  async () => {
    const api = await new MessagesApi().start();
    const clock = fakeClock("2026-03-01T12:00:00.000Z");
    const served = await servedTwilioKit(api, (sms) =>
      createReachkit({ storage: memoryStorage(), scheduler: manualScheduler(clock), clock, sms, logger: silentLogger(), secret: TEST_SECRET }),
    );
    return {
      sender: served.sender,
      deliveredCount: () => api.messages.length,
      reopen: served.reopen,
      refuseNext: (kind) => api.failNext(TWILIO_REFUSALS[kind]),
      async reportStatus(id, status, errorCode) {
        assert.equal(await api.reportStatus(id, status, errorCode), 204);
      },
      inboundRequest: (text) => api.inboundWebhookRequest(`${served.publicUrl}/sms/inbound`, text),
      async close() {
        await served.close();
        await api.close();
      },
    };
  },
  { mms: true, findsEarlierSends: true, refusals: ALL_REFUSALS, receipts: true, inbound: "webhook" },
);

it("file SMS: a key sent by an earlier process is not sent again; a line cut short by a crash does not count", async () => {
  const path = join(temporaryDirectory("file-sms"), "sent.jsonl");
  const message = { from: "+15550000000", to: "+15555550100", body: "Once", idempotencyKey: "k" };
  const first = await fileSms({ path }).send(message);
  writeFileSync(path, `${readFileSync(path, "utf8")}{"sms":{"idempotencyKey":"cut`, { flag: "w" });
  const restarted = fileSms({ path });
  assert.equal((await restarted.send(message)).providerMessageId, first.providerMessageId);
  await restarted.send({ ...message, idempotencyKey: "cut" });
  const lines = sentLines(path);
  assert.equal(lines.length, 3, "the first, the cut line, and the resent one");
  assert.equal(JSON.parse(lines[2]!).sms.idempotencyKey, "cut");
});

/** The SMSC's command_status for each refusal SMPP has. */
const SMPP_REFUSALS: Readonly<Partial<Record<RefusalKind, number>>> = { invalid_number: 0x0b, rate_limited: 0x58, unavailable: 0x08 };

smsSenderConformance(
  "smpp (against a local SMSC)",
  async () => {
    const smsc = await new SmscServer().start();
    const opened: SmsSender[] = [];
    const open = () => {
      const sender = smppSms({ url: smsc.url });
      opened.push(sender);
      return sender;
    };
    const sender = open();
    await sender.start!();
    return {
      sender,
      deliveredCount: () => smsc.submitted.length,
      reopen: open,
      refuseNext: (kind) => smsc.refuseNext(SMPP_REFUSALS[kind]!),
      async reportStatus(id, status, errorCode) {
        const stat = { delivered: "DELIVRD", undelivered: "UNDELIV", failed: "REJECTD" }[status];
        assert.equal(await smsc.deliverReceipt(id, stat, errorCode), 0);
      },
      async deliverInbound(text) {
        assert.equal(await smsc.deliverText(text.from, text.to, text.body), 0);
      },
      async close() {
        for (const each of opened) await each.stop?.();
        await smsc.close();
      },
    };
  },
  { mms: false, findsEarlierSends: false, refusals: ["invalid_number", "rate_limited", "unavailable"], receipts: true, inbound: "push" },
);
