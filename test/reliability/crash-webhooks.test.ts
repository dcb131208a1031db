import assert from "node:assert/strict";
import { it } from "node:test";
import { Receiver } from "../plugins/webhooks/support.ts";
import { waitUntil } from "../support/wait.ts";
import { CrashableServer, sleep } from "./support.ts";

const optIn = (phone: string) => ({ user: { phone }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING", singleOptIn: true });

it("kill -9 while webhook deliveries are queued and in flight: after the restart every accepted opt-in's sms.subscribed arrives at both webhooks, each with one webhook-id", { timeout: 90_000 }, async () => {
  const server = new CrashableServer({ REACHKIT_WEBHOOKS_ALLOW_PRIVATE: "true" });
  // Two webhooks: an event's deliveries share one job.
  const receivers = [await Receiver.start(), await Receiver.start()];
  // Before the kill the receivers answer nothing: every delivery is still queued or in flight when the server dies.
  let answer!: () => void;
  const answering = new Promise<void>((resolve) => (answer = resolve));
  for (const receiver of receivers) {
    receiver.answer = async (request) => {
      await answering;
      return { status: receiver.hmacMatches(request) ? 200 : 403 };
    };
  }
  try {
    await server.start();
    for (const receiver of receivers) {
      receiver.signingKey = server.webhookSigningKey;
      assert.match(receiver.signingKey, /^whsec_/);
      assert.equal((await server.request("POST", "/v1/webhooks", { url: receiver.url, events: ["sms.subscribed"] })).status, 201);
    }
    const accepted: string[] = [];
    let next = 0;
    const floodUntil = Date.now() + 2_000;
    // On a loaded machine the server answers slower: the flood goes on until 10 were accepted (20 s at most).
    const giveUpAt = Date.now() + 20_000;
    const flooding = () => Date.now() < floodUntil || (accepted.length < 10 && Date.now() < giveUpAt);
    await Promise.all(
      Array.from({ length: 3 }, async () => {
        while (flooding()) {
          const phone = `+1914844${String(3000 + next++)}`;
          const { status } = await server.request("POST", "/v1/subscriptions", optIn(phone));
          if (status === 202) accepted.push(phone);
          else assert.equal(status, 429, `opt-in of ${phone}`);
        }
      }),
    );
    // Let the opt-ins' jobs commit their subscriptions with their deliveries, then die mid-delivery.
    await sleep(500);
    await server.crash();
    assert.ok(accepted.length >= 10, `${accepted.length} opt-ins accepted`);
    answer();

    await server.start();
    const acceptedSet = new Set(accepted);
    const deliveredPhones = (receiver: Receiver) => new Set(receiver.requests.filter((r) => r.json?.type === "sms.subscribed").map((r) => r.json.subscriber.phone as string));
    await waitUntil(
      "an sms.subscribed for every accepted opt-in at each webhook",
      () => receivers.every((receiver) => [...acceptedSet].every((phone) => deliveredPhones(receiver).has(phone))),
      60_000,
    );
    for (const receiver of receivers) {
      const idsByPhone = new Map<string, Set<string>>();
      for (const request of receiver.requests) {
        const phone = request.json.subscriber.phone as string;
        idsByPhone.set(phone, (idsByPhone.get(phone) ?? new Set()).add(String(request.headers["webhook-id"])));
      }
      for (const [phone, ids] of idsByPhone) assert.equal(ids.size, 1, `one webhook-id for ${phone}, on every attempt`);
      assert.ok(receiver.requests.every((request) => receiver.hmacMatches(request)));
    }
    await server.stop();
  } finally {
    await server.dispose();
    for (const receiver of receivers) await receiver.close();
  }
});
