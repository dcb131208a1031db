import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { describe, it } from "node:test";
import type twilioSdk from "twilio";
import { twilioSms } from "../../../adapters/sms/twilio/index.ts";
import { fakeClock } from "../../../adapters/clock/index.ts";
import { manualScheduler } from "../../../adapters/scheduler/manual/index.ts";
import { memoryStorage } from "../../../adapters/storage/memory/index.ts";
import { accountsPlugin } from "../../../plugins/accounts/index.ts";
import { subscriptionsPlugin } from "../../../plugins/subscriptions/index.ts";
import { createReachkit, silentLogger, type MessageStatusEvent, type OutboxMessage } from "../../../src/index.ts";
import { MessagesApi, TEST_ACCOUNT_SID, TEST_AUTH_TOKEN } from "../../support/messages-api.ts";
import { TEST_SECRET, type Json } from "../../support/test-kit.ts";
import { servedTwilioKit } from "../../support/twilio-kit.ts";

const PHONE = "+19148440001";

/** A kit with the subscriptions plugin whose texts go through the Twilio adapter to a local Messages API. */
async function twilioKit() {
  const api = await new MessagesApi().start();
  const clock = fakeClock("2026-03-01T12:00:00.000Z");
  const scheduler = manualScheduler(clock);
  const served = await servedTwilioKit(api, (sms, publicUrl) =>
    createReachkit({
      storage: memoryStorage(),
      scheduler,
      clock,
      sms,
      logger: silentLogger(),
      secret: TEST_SECRET,
      hosts: publicUrl,
      plugins: [accountsPlugin(), subscriptionsPlugin()],
      config: { rateLimits: { "opt-in": 100 } },
    }),
  );
  const { kit } = served;
  const company = (await kit.provisionCompany({ name: "Acme" })).output as { companyId: string; senderNumber: string; apiKey: string };
  const statuses: MessageStatusEvent[] = [];
  kit.events.on("message.status_changed", (event) => void statuses.push(event));
  const text = async (body: string, extra: { mediaUrl?: string } = {}) => {
    const message = await kit.outbox.send({ companyId: company.companyId, to: PHONE, body, kind: "test", ...extra });
    await scheduler.flush();
    return message.id;
  };
  const message = async (id: string) => (await kit.outbox.get(id)) as OutboxMessage;
  const optedIn = async () => {
    const response = await kit.inject({
      method: "POST",
      url: "/v1/subscriptions",
      headers: { authorization: `Bearer ${company.apiKey}` },
      body: { user: { phone: PHONE }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING" },
    });
    assert.equal(response.status, 202, response.body);
    await scheduler.flush();
  };
  /** `[type, eligibility]` of PHONE's text subscriptions. */
  const textSubscriptions = async () =>
    (await kit.plugin("subscriptions").eligibility(company.companyId, { phone: PHONE })).map((e) => [e.subscription.type, e.eligibility.ineligibilityReason ?? "ELIGIBLE"]);
  return {
    ...served,
    api,
    clock,
    scheduler,
    company,
    statuses,
    text,
    message,
    optedIn,
    textSubscriptions,
    async close() {
      await served.close();
      await api.close();
    },
  };
}

type TwilioKit = Awaited<ReturnType<typeof twilioKit>>;

/** A test on its own kit and Messages API, both closed whatever the test's outcome. */
const test = (name: string, body: (t: TwilioKit) => Promise<void>) =>
  it(name, async () => {
    const t = await twilioKit();
    try {
      await body(t);
    } finally {
      await t.close();
    }
  });

describe("Twilio SMS adapter in a kit", () => {
  test("posts each text to the Messages API with the account's credentials and a status callback naming the message", async (t) => {
    const sms = await t.text("Acme: hello");
    const mms = await t.text("Acme: look", { mediaUrl: "https://example.com/a.png" });
    assert.deepEqual(
      t.api.createRequests.map((form) => [form.To, form.From, form.Body, form.MediaUrl, form.StatusCallback]),
      [
        [PHONE, t.company.senderNumber, "Acme: hello", undefined, `${t.publicUrl}/sms/status/${sms}`],
        [PHONE, t.company.senderNumber, "Acme: look", "https://example.com/a.png", `${t.publicUrl}/sms/status/${mms}`],
      ],
    );
    const sent = await t.message(sms);
    assert.equal(sent.status, "sent");
    assert.equal(sent.providerMessageId, t.api.messages[0]!.sid);
  });

  test("its texts get no receipt key: each status callback names its message, which it moves all the same", async (t) => {
    const id = await t.text("Acme: hello");
    const sent = await t.message(id);
    assert.deepEqual([sent.status, sent.providerMessageId, sent.receiptKey], ["sent", t.api.messages[0]!.sid, undefined]);
    assert.equal(await t.api.reportStatus(t.api.messages[0]!.sid, "delivered"), 204);
    const delivered = await t.message(id);
    assert.deepEqual([delivered.status, delivered.receiptKey], ["delivered", undefined]);
  });

  test("signed status callbacks move the message to delivered or undelivered with Twilio's error code; a bad signature is 403 and changes nothing", async (t) => {
    const delivered = await t.text("one");
    const undelivered = await t.text("two");
    const [first, second] = t.api.messages;
    const forged = await t.api.postSigned(`${t.publicUrl}/sms/status/${delivered}`, { MessageSid: first!.sid, MessageStatus: "failed", ErrorCode: "30007" }, "bm90IHRoZSBzaWduYXR1cmU=");
    assert.equal(forged.status, 403);
    assert.equal((forged.json as Json).error.code, "forbidden");
    assert.equal((await t.message(delivered)).status, "sent");
    // A callback signed for another message's URL does not move this one.
    const replayed = await t.api.postSigned(`${t.publicUrl}/sms/status/${undelivered}`, { MessageSid: first!.sid, MessageStatus: "failed" }, t.api.sign(`${t.publicUrl}/sms/status/${delivered}`, { MessageSid: first!.sid, MessageStatus: "failed" }));
    assert.equal(replayed.status, 403);

    assert.equal(await t.api.reportStatus(first!.sid, "sending"), 204);
    assert.equal(await t.api.reportStatus(first!.sid, "delivered"), 204);
    assert.equal(await t.api.reportStatus(second!.sid, "undelivered", "30003"), 204);
    assert.equal((await t.message(delivered)).status, "delivered");
    const failed = await t.message(undelivered);
    assert.deepEqual([failed.status, failed.errorCode], ["undelivered", "30003"]);
    assert.deepEqual(
      t.statuses.map((event) => [event.messageId, event.status, event.errorCode]),
      [
        [delivered, "sent", undefined],
        [undelivered, "sent", undefined],
        [delivered, "delivered", undefined],
        [undelivered, "undelivered", "30003"],
      ],
    );
  });

  test("error 21610 fails the text and opts the number's TEXT subscriptions out, without a text", async (t) => {
    await t.optedIn();
    const confirmation = t.api.messages.length;
    assert.equal(confirmation, 1, "the opt-in's confirmation request");
    t.api.refuseNumber(PHONE, { status: 400, code: 21610, message: "Attempt to send to unsubscribed recipient" });
    const refused = await t.text("Acme: deals");
    const message = await t.message(refused);
    assert.deepEqual([message.status, message.errorCode, message.attempts], ["failed", "21610", 1]);
    assert.deepEqual(await t.textSubscriptions(), [["MARKETING", "OPTED_OUT"]]);
    assert.equal(t.api.createRequests.length, 2, "no unsubscribe notice went out");
  });

  test("an invalid number fails at once; 429 and 5xx are retried with backoff until Twilio takes the text", async (t) => {
    const invalid = await t.text("to somewhere");
    t.api.refuseNumber("+19148440002", { status: 400, code: 21211, message: "The 'To' number is not a valid phone number." });
    const refused = await t.kit.outbox.send({ companyId: t.company.companyId, to: "+19148440002", body: "x", kind: "test" });
    await t.scheduler.flush();
    const failed = await t.message(refused.id);
    assert.deepEqual([failed.status, failed.errorCode, failed.attempts], ["failed", "21211", 1]);
    assert.equal((await t.message(invalid)).status, "sent");

    t.api.failNext({ status: 429, code: 20429, message: "Too Many Requests" }, { status: 503, message: "Service Unavailable" });
    const retried = await t.text("eventually");
    assert.deepEqual([(await t.message(retried)).status, (await t.message(retried)).reason], ["queued", "Too Many Requests (HTTP 429, error 20429)"]);
    await t.scheduler.advance(1_000);
    assert.equal((await t.message(retried)).status, "queued");
    await t.scheduler.advance(2_000);
    const sent = await t.message(retried);
    assert.deepEqual([sent.status, sent.attempts, sent.reason], ["sent", 3, undefined]);
    assert.equal(t.api.messagesTo(PHONE).filter((m) => m.body === "eventually").length, 1);
  });

  test("a text whose answer was lost is found at Twilio on the next attempt, not sent again", async (t) => {
    t.api.failNext("drop");
    const id = await t.text("exactly once");
    assert.equal((await t.message(id)).status, "queued");
    assert.equal(t.api.messages.length, 1, "Twilio took it; the answer never came");
    await t.scheduler.advance(1_000);
    const message = await t.message(id);
    assert.deepEqual([message.status, message.providerMessageId], ["sent", t.api.messages[0]!.sid]);
    assert.equal(t.api.messages.length, 1);
    assert.equal(t.api.createRequests.length, 1);
  });

  test("the signed inbound webhook feeds the keyword flow; a bad signature is 403 and changes nothing", async (t) => {
    await t.optedIn();
    const inbound = `${t.publicUrl}/sms/inbound`;
    const params = t.api.inboundParams({ from: PHONE, to: t.company.senderNumber, body: "Y" });
    const forged = await t.api.postSigned(inbound, params, "bm90IHRoZSBzaWduYXR1cmU=");
    assert.equal(forged.status, 403);
    assert.deepEqual(await t.textSubscriptions(), [["MARKETING", "NOT_FULLY_OPTED_IN"]]);
    const confirmed = await t.api.sendInbound(inbound, { from: PHONE, to: t.company.senderNumber, body: "Y" });
    assert.equal(confirmed.status, 200);
    assert.deepEqual(confirmed.json, { received: true, keyword: "confirm", changed: 1 });
    const stopped = await t.api.sendInbound(inbound, { from: PHONE, to: t.company.senderNumber, body: "STOP" });
    assert.deepEqual(stopped.json, { received: true, keyword: "stop", changed: 1 });
    assert.deepEqual(await t.textSubscriptions(), [["MARKETING", "OPTED_OUT"]]);
  });
});

describe("Twilio SMS adapter alone", () => {
  it("posts the very request the library's messages.create posts: path, credentials, headers and form", async () => {
    const api = await new MessagesApi().start();
    try {
      const sdk = createRequire(import.meta.url)("twilio") as typeof twilioSdk;
      const requests = new sdk.RequestClient();
      const library = sdk(TEST_ACCOUNT_SID, TEST_AUTH_TOKEN, {
        httpClient: Object.assign(Object.create(requests) as typeof requests, {
          request: (request: Parameters<typeof requests.request>[0]) => requests.request({ ...request, uri: `${api.url}${new URL(request.uri).pathname}` }),
        }),
      });
      const publicUrl = "https://shop.example";
      const statusCallback = `${publicUrl}/sms/status/01JQ0000000000000000000000`;
      await library.messages.create({ to: PHONE, from: "+15550001111", body: "Acme: look", mediaUrl: ["https://example.com/a.png"], statusCallback });
      const sms = twilioSms({ accountSid: TEST_ACCOUNT_SID, authToken: TEST_AUTH_TOKEN, publicUrl, apiUrl: api.url });
      const sent = await sms.send({ from: "+15550001111", to: PHONE, body: "Acme: look", mediaUrl: "https://example.com/a.png", idempotencyKey: "01JQ0000000000000000000000" });
      assert.equal(sent.providerMessageId, api.messages[1]!.sid);
      assert.deepEqual(api.createRequests[1], api.createRequests[0]);
      const compared = ({ authorization, accept, "accept-charset": charset, "content-type": type, "user-agent": agent }: Record<string, unknown>) => ({ authorization, accept, charset, type, agent });
      assert.deepEqual(compared(api.createHeaders[1]!), compared(api.createHeaders[0]!));
      assert.equal(api.createHeaders.length, 2);
    } finally {
      await api.close();
    }
  });
});
