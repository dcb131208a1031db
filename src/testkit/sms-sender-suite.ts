import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { DeliveryReceipt, ReportedStatus } from "../messaging/delivery-status.ts";
import { SmsSendError, type InboundSms, type InboundWebhookRequest, type OutboundSms, type SmsErrorKind, type SmsSender } from "../ports/sms-sender.ts";

/** The refusals a provider can be made to answer in the suite. */
export type RefusalKind = Extract<SmsErrorKind, "invalid_number" | "opted_out" | "rate_limited" | "unavailable">;

export interface SmsSenderHarness {
  sender: SmsSender;
  /** How many messages actually reached recipients so far (the provider's own record, or the adapter's). */
  deliveredCount(): number | Promise<number>;
  /** A new instance of the adapter on the same provider, as after a restart of the process. */
  reopen(): SmsSender | Promise<SmsSender>;
  /** Makes the provider refuse the next message like this. Absent: the adapter has no provider that refuses. */
  refuseNext?(kind: RefusalKind): void;
  /**
   * Makes the provider report a status (and error code) for a message it took,
   * the way it reports them (a signed callback, an SMPP receipt); resolves once
   * the adapter has handled it. Absent: the adapter gets no receipts.
   */
  reportStatus?(providerMessageId: string, status: Exclude<ReportedStatus, "sent">, errorCode?: string): Promise<void>;
  /** A subscriber's text as the provider posts it to the inbound webhook, signed (for adapters with `verifyInbound`). */
  inboundRequest?(text: InboundSms): InboundWebhookRequest;
  /** Makes the provider hand the adapter a subscriber's text (for adapters with `onInbound`); resolves once handled. */
  deliverInbound?(text: InboundSms): Promise<void>;
  /** Ends what the harness started (servers, connections). */
  close?(): Promise<void>;
}

export interface SmsSenderCapabilities {
  /** Sends MMS (`mediaUrl`); without, a message with media is refused as `rejected` and nothing is sent. */
  mms: boolean;
  /**
   * Finds a message an earlier process sent under a key (`earlierAttemptAt`)
   * and answers it instead of sending again; without, such an attempt is
   * refused as `in_doubt`. Either way nothing is sent twice.
   */
  findsEarlierSends: boolean;
  /** The refusals the provider can answer (the harness's `refuseNext`); SMPP, say, has no opted-out status. */
  refusals: readonly RefusalKind[];
  /** The provider reports delivery (the harness's `reportStatus`, the adapter's `onReceipt`). */
  receipts: boolean;
  /** How subscribers' texts arrive: a signed webhook the kit serves (`verifyInbound`), pushed to the adapter (`onInbound`), or not at all. */
  inbound: "webhook" | "push" | "none";
}

const RETRYABLE: Readonly<Record<RefusalKind, boolean>> = { invalid_number: false, opted_out: false, rate_limited: true, unavailable: true };

const message = (key: string, extra: Partial<OutboundSms> = {}): OutboundSms => ({ from: "+15550000000", to: "+15555550100", body: `Hello ${key}`, idempotencyKey: key, ...extra });

async function refusal(sending: Promise<unknown>): Promise<SmsSendError> {
  const error = await sending.then(
    () => assert.fail("the send was expected to fail"),
    (failure: unknown) => failure,
  );
  assert.ok(error instanceof SmsSendError, `an SmsSendError, got ${String(error)}`);
  return error;
}

/**
 * The SmsSender port's conformance suite: a send returns a provider id, the
 * same idempotency key never delivers twice (not even from the next process,
 * after an attempt in doubt), refusals are typed, and receipts and inbound
 * texts reach the kit. Capabilities switch tests between two fixed behaviours;
 * the harness's optional parts add the tests of what the adapter receives.
 */
export function smsSenderConformance(
  adapterName: string,
  makeHarness: () => SmsSenderHarness | Promise<SmsSenderHarness>,
  capabilities: SmsSenderCapabilities,
): void {
  const withHarness = (test: (harness: SmsSenderHarness) => Promise<void>) => async () => {
    const harness = await makeHarness();
    try {
      await test(harness);
    } finally {
      await harness.close?.();
    }
  };

  describe(`SmsSender conformance: ${adapterName}`, () => {
    it(
      "sends an SMS and returns a provider id",
      withHarness(async ({ sender, deliveredCount }) => {
        const sms = await sender.send(message("k1"));
        assert.equal(typeof sms.providerMessageId, "string");
        assert.ok(sms.providerMessageId.length > 0);
        assert.equal(await deliveredCount(), 1);
      }),
    );

    if (capabilities.mms) {
      it(
        "sends an MMS with its media URL under a provider id of its own",
        withHarness(async ({ sender, deliveredCount }) => {
          const sms = await sender.send(message("k1"));
          const mms = await sender.send(message("k2", { mediaUrl: "https://example.com/a.png" }));
          assert.notEqual(sms.providerMessageId, mms.providerMessageId);
          assert.equal(await deliveredCount(), 2);
        }),
      );
    } else {
      it(
        "refuses an MMS for good and sends nothing",
        withHarness(async ({ sender, deliveredCount }) => {
          const error = await refusal(sender.send(message("k2", { mediaUrl: "https://example.com/a.png" })));
          assert.equal(error.kind, "rejected");
          assert.equal(error.retryable, false);
          assert.equal(await deliveredCount(), 0);
        }),
      );
    }

    it(
      "delivers once per idempotency key and returns the same provider id",
      withHarness(async ({ sender, deliveredCount }) => {
        const first = await sender.send(message("same"));
        const second = await sender.send(message("same"));
        assert.equal(second.providerMessageId, first.providerMessageId);
        assert.equal(await deliveredCount(), 1);
      }),
    );

    if (capabilities.findsEarlierSends) {
      it(
        "after a restart, an attempt in doubt answers the message sent before it instead of sending again",
        withHarness(async ({ sender, deliveredCount, reopen }) => {
          const earlierAttemptAt = Date.now() - 1_000;
          const first = await sender.send(message("doubt"));
          const restarted = await reopen();
          assert.equal((await restarted.send({ ...message("doubt"), earlierAttemptAt })).providerMessageId, first.providerMessageId);
          assert.equal(await deliveredCount(), 1);
          // An attempt in doubt that never reached the provider is sent now.
          const other = await restarted.send({ ...message("never-arrived"), earlierAttemptAt });
          assert.notEqual(other.providerMessageId, first.providerMessageId);
          assert.equal(await deliveredCount(), 2);
        }),
      );
    } else {
      it(
        "after a restart, an attempt in doubt is refused as in_doubt, never sent blindly",
        withHarness(async ({ sender, deliveredCount, reopen }) => {
          await sender.send(message("doubt"));
          const restarted = await reopen();
          const error = await refusal(restarted.send({ ...message("doubt"), earlierAttemptAt: Date.now() - 1_000 }));
          assert.equal(error.kind, "in_doubt");
          assert.equal(error.retryable, false);
          assert.equal(await deliveredCount(), 1);
        }),
      );
    }

    if (capabilities.refusals.length > 0) {
      it(
        "types the provider's refusals: invalid and opted-out numbers for good, rate limits and outages to retry; nothing is sent",
        withHarness(async ({ sender, deliveredCount, refuseNext }) => {
          for (const kind of capabilities.refusals) {
            refuseNext!(kind);
            const error = await refusal(sender.send(message(kind)));
            assert.equal(error.kind, kind);
            assert.equal(error.retryable, RETRYABLE[kind], `${kind} retryable`);
            // An outage may have come after the provider took the message (a proxy's 502): the adapter may say so.
            if (kind !== "unavailable") assert.equal(error.mayHaveSent, false, `${kind}: the provider answered, so nothing left`);
          }
          assert.equal(await deliveredCount(), 0);
          // A refusal does not hold the key: the next attempt sends.
          await sender.send(message(capabilities.refusals[0]!));
          assert.equal(await deliveredCount(), 1);
        }),
      );
    }

    if (capabilities.receipts) {
      it(
        "hands the provider's receipts to the kit with the provider id, the status and the error code",
        withHarness(async ({ sender, reportStatus }) => {
          const receipts: DeliveryReceipt[] = [];
          sender.onReceipt!(async (receipt) => void receipts.push(receipt));
          const delivered = await sender.send(message("delivered"));
          const undelivered = await sender.send(message("undelivered"));
          await reportStatus!(delivered.providerMessageId, "delivered");
          await reportStatus!(undelivered.providerMessageId, "undelivered", "30003");
          assert.deepEqual(
            receipts.map((receipt) => [receipt.providerMessageId, receipt.status, receipt.errorCode]),
            [
              [delivered.providerMessageId, "delivered", undefined],
              [undelivered.providerMessageId, "undelivered", "30003"],
            ],
          );
          // A provider that carries the message's key back names it.
          for (const [receipt, key] of [[receipts[0]!, "delivered"], [receipts[1]!, "undelivered"]] as const) {
            assert.ok(receipt.messageId === undefined || receipt.messageId === key, `the receipt's messageId ${receipt.messageId}`);
          }
        }),
      );
    }

    if (capabilities.inbound === "webhook") {
      it(
        "trusts the provider's signed inbound webhook, and no request altered or unsigned",
        withHarness(async ({ sender, inboundRequest }) => {
          const request = inboundRequest!({ from: "+15555550100", to: "+15550000000", body: "STOP" });
          assert.equal(sender.verifyInbound!(request), true);
          assert.equal(sender.verifyInbound!({ ...request, params: { ...request.params, Body: "Y" } }), false, "a body changed after signing");
          assert.equal(sender.verifyInbound!({ ...request, url: `${request.url}/other` }), false, "another URL");
          const unsigned = Object.fromEntries(Object.entries(request.headers).filter(([name]) => !/signature/i.test(name)));
          assert.equal(sender.verifyInbound!({ ...request, headers: unsigned }), false, "no signature");
        }),
      );
    }

    if (capabilities.inbound === "push") {
      it(
        "hands a subscriber's text to the kit",
        withHarness(async ({ sender, deliverInbound }) => {
          const received: InboundSms[] = [];
          sender.onInbound!(async (text) => void received.push(text));
          await deliverInbound!({ from: "+15555550100", to: "+15550000000", body: "Y" });
          assert.deepEqual(
            received.map((text) => [text.from, text.to, text.body]),
            [["+15555550100", "+15550000000", "Y"]],
          );
        }),
      );
    }
  });
}
