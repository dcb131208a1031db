import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { SmsSender } from "../ports/sms-sender.ts";

export interface SmsSenderHarness {
  sender: SmsSender;
  /** How many messages actually reached recipients so far (the provider's own record, or the adapter's). */
  deliveredCount(): number | Promise<number>;
}

/**
 * The SmsSender port's conformance suite: a send returns a provider id, and the
 * same idempotency key never delivers twice.
 */
export function smsSenderConformance(adapterName: string, makeHarness: () => SmsSenderHarness | Promise<SmsSenderHarness>): void {
  describe(`SmsSender conformance: ${adapterName}`, () => {
    it("sends an SMS and an MMS and returns provider ids", async () => {
      const { sender, deliveredCount } = await makeHarness();
      const sms = await sender.send({ from: "+15550000000", to: "+15555550100", body: "Hello", idempotencyKey: "k1" });
      const mms = await sender.send({
        from: "+15550000000",
        to: "+15555550100",
        body: "Look",
        mediaUrl: "https://example.com/a.png",
        idempotencyKey: "k2",
      });
      assert.equal(typeof sms.providerMessageId, "string");
      assert.ok(sms.providerMessageId.length > 0);
      assert.notEqual(sms.providerMessageId, mms.providerMessageId);
      assert.equal(await deliveredCount(), 2);
    });

    it("delivers once per idempotency key and returns the same provider id", async () => {
      const { sender, deliveredCount } = await makeHarness();
      const message = { from: "+15550000000", to: "+15555550100", body: "Once", idempotencyKey: "same" };
      const first = await sender.send(message);
      const second = await sender.send(message);
      assert.equal(second.providerMessageId, first.providerMessageId);
      assert.equal(await deliveredCount(), 1);
    });
  });
}
