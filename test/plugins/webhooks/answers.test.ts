import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, it } from "node:test";
import { RESPONSE_BODY_KEPT } from "../../../plugins/webhooks/delivery-sender.ts";
import { receiversClosedAfterEach, singleOptIn, startWebhookKit, type WebhookKit } from "./support.ts";

let t: WebhookKit | undefined;
const receiver = receiversClosedAfterEach(async () => {
  await t?.stop();
  t = undefined;
});
let endless: Server | undefined;
afterEach(async () => {
  if (endless === undefined) return;
  const server = endless;
  endless = undefined;
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function optIn(kit: WebhookKit, phone: string) {
  const answer = await kit.request({ method: "POST", url: "/v1/subscriptions", body: singleOptIn(phone) });
  assert.equal(answer.status, 202, answer.body);
  await kit.scheduler.flush();
}

/** A receiver that answers 200 and sends `bytes` of its body, then holds the answer open without ending it. */
async function neverEnding(bytes: number): Promise<string> {
  endless = createServer((request, response) => {
    request.resume();
    response.writeHead(200, { "content-type": "text/plain" });
    response.write("e".repeat(bytes));
  });
  await new Promise<void>((resolve) => endless!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(endless.address() as AddressInfo).port}/hooks`;
}

describe("webhook receivers' answers", () => {
  it("keeps the first 1,024 bytes of an answer's body in the delivery log, with its status", async () => {
    t = await startWebhookKit();
    const wordy = await receiver(t.signingKey);
    wordy.answer = () => ({ status: 200, body: "a".repeat(600) + "b".repeat(3_000) });
    const failing = await receiver(t.signingKey);
    failing.answer = () => ({ status: 503, body: "c".repeat(2_000) });
    const delivered = await t.createWebhook(wordy.url, ["sms.subscribed"]);
    const retrying = await t.createWebhook(failing.url, ["sms.subscribed"]);
    await optIn(t, "+19148440061");
    const byWebhook = new Map((await t.deliveries()).map((delivery) => [delivery.webhookId, delivery]));
    const wordyDelivery = byWebhook.get(delivered.id)!;
    assert.deepEqual([wordyDelivery.status, wordyDelivery.responseStatus, wordyDelivery.responseBody], ["delivered", 200, "a".repeat(600) + "b".repeat(RESPONSE_BODY_KEPT - 600)]);
    const failingDelivery = byWebhook.get(retrying.id)!;
    assert.deepEqual(
      [failingDelivery.status, failingDelivery.responseStatus, failingDelivery.responseBody, failingDelivery.error],
      ["pending", 503, "c".repeat(RESPONSE_BODY_KEPT), "the receiver answered 503"],
    );
  });

  it("stops reading an answer past 64 KiB: a 2xx that never ends is delivered at once with its start, not timed out", async () => {
    t = await startWebhookKit({ webhooks: { attemptTimeoutMs: 2_000 } });
    const url = await neverEnding(100 * 1024);
    const webhook = await t.createWebhook(url, ["sms.subscribed"]);
    await optIn(t, "+19148440062");
    const [delivery] = await t.deliveries();
    assert.equal(delivery!.webhookId, webhook.id);
    assert.deepEqual([delivery!.status, delivery!.attempts, delivery!.responseStatus, delivery!.responseBody, delivery!.error], ["delivered", 1, 200, "e".repeat(RESPONSE_BODY_KEPT), undefined]);
  });
});
