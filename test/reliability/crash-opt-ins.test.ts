import assert from "node:assert/strict";
import { it } from "node:test";
import { waitUntil } from "../support/wait.ts";
import { CrashableServer, sleep, tally } from "./support.ts";

const optIn = (phone: string) => ({ user: { phone }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING" });

it("kill -9 during a flood of opt-ins: every opt-in answered 202 is processed after the restart, and no text goes out twice", { timeout: 60_000 }, async () => {
  // Five texts a second: the outbox is still sending when the server is killed.
  const server = new CrashableServer({ REACHKIT_SMS_PER_SECOND: "5" });
  try {
    await server.start();
    const accepted: string[] = [];
    let next = 0;
    const floodUntil = Date.now() + 2_500;
    // On a loaded machine the server answers slower: the flood goes on until 15 were accepted (20 s at most).
    const giveUpAt = Date.now() + 20_000;
    const flooding = () => Date.now() < floodUntil || (accepted.length < 15 && Date.now() < giveUpAt);
    // Four clients at once, as fast as the opt-in rate limit (10 a second per token) lets them through.
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (flooding()) {
          const phone = `+1914844${String(1000 + next++)}`;
          const { status } = await server.request("POST", "/v1/subscriptions", optIn(phone));
          if (status === 202) accepted.push(phone);
          else assert.equal(status, 429, `opt-in of ${phone}`);
        }
      }),
    );
    // The flood goes on while the server dies: requests in flight at the kill get no answer and do not count.
    const inFlight = Array.from({ length: 4 }, () => server.request("POST", "/v1/subscriptions", optIn(`+1914844${String(1000 + next++)}`)).catch(() => undefined));
    await server.crash();
    await Promise.all(inFlight);
    const sentBeforeCrash = server.sentTexts().length;
    assert.ok(accepted.length >= 15, `${accepted.length} opt-ins accepted`);
    assert.ok(sentBeforeCrash < accepted.length, `work was left when the server died (${sentBeforeCrash} of ${accepted.length} sent)`);

    await server.start();
    const acceptedSet = new Set(accepted);
    const confirmedPhones = () => new Set(server.sentTexts().map((text) => text.to).filter((to) => acceptedSet.has(to)));
    // Usually 7 to 9 s. Confirmations that never came were alarms node-schedule dropped (their time passed while
    // being set), not slow sending: the phones still unconfirmed are named.
    await waitUntil("a confirmation for every accepted opt-in", () => confirmedPhones().size === accepted.length, 30_000).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}; not confirmed: ${accepted.filter((phone) => !confirmedPhones().has(phone)).join(", ")}`);
    });
    // Time for a duplicate to show, if the restart were to send one.
    await sleep(1_500);

    const texts = server.sentTexts();
    for (const [phone, count] of tally(texts.map((text) => text.to))) assert.equal(count, 1, `texts to ${phone}`);
    for (const [key, count] of tally(texts.map((text) => text.idempotencyKey))) assert.equal(count, 1, `texts with idempotency key ${key}`);
    for (const text of texts.filter((text) => acceptedSet.has(text.to))) assert.match(text.body, /Reply Y/);
    assert.ok(
      server.allLogs().some((entry) => entry.msg === "the previous server of this data directory did not stop cleanly; recovering its work"),
      "the restart says it recovers a crash",
    );
    // Every accepted opt-in made its subscription: pending until the subscriber replies Y.
    const users = accepted.map((phone, index) => `u${index}: user(phone: "${phone}") { subscriptions { subscriptionEligibilities { subscription { channel } eligibility { ineligibilityReason } } } }`);
    const query = `{ viewer { installedApplication { installerCompany { ${users.join(" ")} } } } }`;
    const answer = await server.request("POST", "/v1/graphql", { query });
    assert.equal(answer.status, 200);
    const company = answer.json.data.viewer.installedApplication.installerCompany;
    for (const [index, phone] of accepted.entries()) {
      const text = company[`u${index}`].subscriptions.subscriptionEligibilities.find((entry: { subscription: { channel: string } }) => entry.subscription.channel === "CHANNEL_TEXT");
      assert.equal(text?.eligibility.ineligibilityReason, "INELIGIBILITY_REASON_NOT_FULLY_OPTED_IN", `the subscription of ${phone}`);
    }
    await server.stop();
  } finally {
    await server.dispose();
  }
});
