import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cliWith, newDataDir } from "../support/cli.ts";
import { MessagesApi } from "../support/messages-api.ts";
import type { Json } from "../support/test-kit.ts";

const PHONE = "+19148440001";

/** `reachkit <args>` on a data directory whose server sends through Twilio to a local Messages API. */
function reachkit(dataDir: string, api: MessagesApi, ...args: string[]) {
  return cliWith({ sms: { kind: "twilio", accountSid: api.accountSid, authToken: api.authToken, apiUrl: api.url } }, dataDir, ...args);
}

describe("reachkit sms send-test", () => {
  it("sends a text through the configured provider at once and prints its id; outbox list shows it sent", async () => {
    const api = await new MessagesApi().start();
    try {
      const dataDir = newDataDir();
      const company = (await reachkit(dataDir, api, "init", "--json")).json;
      const sent = await reachkit(dataDir, api, "sms", "send-test", "--to", PHONE, "--json");
      assert.equal(sent.code, 0, sent.stderr);
      assert.deepEqual(
        api.messages.map((message) => [message.from, message.to, message.body]),
        [[company.senderNumber, PHONE, "reachkit test message: your SMS provider works."]],
      );
      assert.deepEqual([sent.json.status, sent.json.providerMessageId], ["sent", api.messages[0]!.sid]);
      const listed = (await reachkit(dataDir, api, "outbox", "list", "--to", PHONE, "--json")).json;
      assert.deepEqual(
        listed.map((message: Json) => [message.kind, message.status, message.providerMessageId]),
        [["send_test", "sent", api.messages[0]!.sid]],
      );
    } finally {
      await api.close();
    }
  });

  it("says what the provider refused, with its code (exit 1); a number that is not E.164 is a usage error (exit 2)", async () => {
    const api = await new MessagesApi().start();
    try {
      const dataDir = newDataDir();
      await reachkit(dataDir, api, "init");
      api.refuseNumber(PHONE, { status: 400, code: 21610, message: "Attempt to send to unsubscribed recipient" });
      const refused = await reachkit(dataDir, api, "sms", "send-test", "--to", PHONE);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /Attempt to send to unsubscribed recipient .*\(error 21610\)/);
      const bad = await reachkit(dataDir, api, "sms", "send-test", "--to", "555-0100");
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /--to must be an E\.164 number/);
      await reachkit(dataDir, api, "init", "--company", "Second");
      const ambiguous = await reachkit(dataDir, api, "sms", "send-test", "--to", "+19148440002");
      assert.equal(ambiguous.code, 2);
      assert.match(ambiguous.stderr, /--company is required: there are 2 companies/);
      assert.equal(api.messages.length, 0);
    } finally {
      await api.close();
    }
  });
});
