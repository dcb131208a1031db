import assert from "node:assert/strict";
import { it } from "node:test";
import { cli } from "../support/cli.ts";
import { MessagesApi } from "../support/messages-api.ts";
import type { Json } from "../support/test-kit.ts";
import { waitUntil } from "../support/wait.ts";
import { CrashableServer, sleep, tally } from "./support.ts";

const optIn = (phone: string) => ({ user: { phone }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING" });

it("kill -9 while texts go out through Twilio: after the restart every text reached the Messages API once, none twice", { timeout: 120_000 }, async () => {
  const api = await new MessagesApi().start();
  // Each create is answered a second after Twilio took it: the kill leaves texts whose outcome the server never learned.
  api.answerDelayMs = 1_000;
  const server = new CrashableServer({
    REACHKIT_SMS: "twilio",
    TWILIO_ACCOUNT_SID: api.accountSid,
    TWILIO_AUTH_TOKEN: api.authToken,
    REACHKIT_TWILIO_API_URL: api.url,
    REACHKIT_SMS_PER_SECOND: "10",
  });
  try {
    await server.start();
    const accepted: string[] = [];
    let next = 0;
    let flooding = true;
    // Four clients at once, as fast as the opt-in rate limit (10 a second per token) lets them through.
    const flood = Promise.all(
      Array.from({ length: 4 }, async () => {
        while (flooding) {
          const phone = `+1914855${String(1000 + next++)}`;
          const answer = await server.request("POST", "/v1/subscriptions", optIn(phone)).catch(() => undefined);
          if (answer?.status === 202) accepted.push(phone);
          else if (answer) assert.equal(answer.status, 429, `opt-in of ${phone}`);
        }
      }),
    );
    // Killed while Twilio holds texts it has not answered for yet, and opt-ins wait for their texts.
    await waitUntil("texts taken by Twilio", () => api.messages.length >= 8 && accepted.length >= 15, 30_000);
    // The opt-ins in flight at the kill get no answer and do not count.
    flooding = false;
    await server.crash();
    await flood;
    const takenBeforeCrash = api.messages.length;
    assert.ok(takenBeforeCrash < accepted.length, `work was left when the server died (${takenBeforeCrash} of ${accepted.length} taken)`);

    await server.start();
    const acceptedSet = new Set(accepted);
    const textedPhones = () => new Set(api.messages.map((message) => message.to).filter((to) => acceptedSet.has(to)));
    await waitUntil("a text to every accepted opt-in", () => textedPhones().size === accepted.length, 60_000);
    // Time for a duplicate to show, if the restart were to send one.
    await sleep(1_500);

    for (const [phone, count] of tally(api.messages.map((message) => message.to))) assert.equal(count, 1, `texts to ${phone}`);
    for (const [callback, count] of tally(api.messages.map((message) => message.statusCallback ?? ""))) assert.equal(count, 1, `texts with status callback ${callback}`);
    for (const message of api.messages) assert.match(message.body, /Reply Y/);
    // Every confirmation is recorded as sent, with the id Twilio gave it (the outbox as `reachkit outbox list` shows it).
    const sids = new Set(api.messages.map((message) => message.sid));
    const outbox = async () => {
      await sleep(250);
      return ((await cli(server.dataDir, "outbox", "list", "--json")).json as Json[]).filter((message) => acceptedSet.has(message.to));
    };
    await waitUntil("every text recorded as sent", async () => (await outbox()).every((message) => message.status === "sent"), 60_000);
    const recorded = await outbox();
    assert.equal(recorded.length, accepted.length);
    for (const message of recorded) assert.ok(sids.has(message.providerMessageId), `${message.id} has the id Twilio gave it`);
    await server.stop();
  } finally {
    await server.dispose();
    await api.close();
  }
});
