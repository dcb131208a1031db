import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { memorySms, type MemorySms } from "../../adapters/sms/memory/index.ts";
import { startTestKit, type TestKit } from "../support/test-kit.ts";

const TO = "+15555550100";

async function sendTexts(t: TestKit, count: number, prefix = "text"): Promise<void> {
  for (let i = 1; i <= count; i++) await t.kit.outbox.send({ companyId: t.company.companyId, to: TO, body: `${prefix} ${i}`, kind: "test" });
}

const bodies = (t: TestKit) => t.sms.sent.map((message) => message.body);

describe("texts at their sender's rate", () => {
  it("a burst from one sender goes out in order, no more than the rate's texts in any second", async () => {
    const memory = memorySms();
    const startedAt: number[] = [];
    const timed: MemorySms = { ...memory, send: (message) => (startedAt.push(Date.now()), memory.send(message)) };
    const t = await startTestKit({ sms: timed, config: { messaging: { ratePerSecond: 2 } } });
    await sendTexts(t, 5);
    await t.scheduler.flush();
    assert.deepEqual(bodies(t), ["text 1", "text 2", "text 3", "text 4", "text 5"]);
    // The sender's limiter keeps a sliding window of real time (Date.now, p-queue's clock): the third text starts a second
    // after the first, at least. Measured here at the sender, a little after the limiter's own tick: a stall of a loaded
    // machine between the two (one CI run saw texts 1 and 3 under 990 ms apart, 2026-11-28) is not the limiter's.
    const gaps = startedAt.slice(2).map((at, index) => at - startedAt[index]!);
    assert.ok(gaps.every((gap) => gap >= 900), `texts two apart less than a second apart: ${gaps.join(", ")} ms`);
    assert.deepEqual((await t.kit.outbox.list({ to: TO })).map((m) => m.attempts), [1, 1, 1, 1, 1]);
    await t.stop();
  });
});

describe("a provider slow to answer", () => {
  it("holds the sending slots only: an opt-in queued behind its texts is processed, and its text goes out after them", async () => {
    const memory = memorySms();
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const waiting: string[] = [];
    const slow: MemorySms = {
      ...memory,
      async send(message) {
        waiting.push(message.body);
        await answered;
        return memory.send(message);
      },
    };
    const t = await startTestKit({ sms: slow, config: { jobs: { concurrency: 1 }, messaging: { ratePerSecond: Infinity, sendsAtOnce: 2 } } });
    for (let i = 1; i <= 4; i++) await t.kit.outbox.send({ companyId: t.company.companyId, to: `+1555555020${i}`, body: `text ${i}`, kind: "test" });
    // Never settles while the provider keeps its answers: it waits for every job it started.
    const delivering = t.scheduler.flush();
    await until(() => waiting.length === 2, "two texts handed to the provider");
    const optIn = await t.request({ method: "POST", url: "/v1/subscriptions", body: { user: { phone: TO }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING" } });
    assert.equal(optIn.status, 202);
    void t.scheduler.flush();
    const subscriptions = () => t.kit.plugin("subscriptions").subscriptions(t.company.companyId, { phone: TO });
    await until(async () => (await subscriptions()).length === 1, "the opt-in processed");
    assert.deepEqual((await subscriptions()).map((s) => s.state), ["pending"]);
    assert.deepEqual(waiting, ["text 1", "text 2"], "no more texts of a sender waiting on the provider than sendsAtOnce");
    answer();
    await delivering;
    await t.scheduler.flush();
    assert.deepEqual(bodies(t).slice(0, 4), ["text 1", "text 2", "text 3", "text 4"]);
    assert.match(bodies(t)[4] ?? "", /Reply Y/);
    await t.stop();
  });
});

describe("messaging.sendsAtOnce", () => {
  it("refuses a number of texts at once that is not a whole number of at least 1", async () => {
    for (const sendsAtOnce of [0, -1, 2.5, Number.NaN, Infinity]) {
      await assert.rejects(startTestKit({ config: { messaging: { sendsAtOnce } } }), /messaging.sendsAtOnce must be a whole number of at least 1/);
    }
  });
});

/** Lets the event loop turn until `condition` holds (a bounded number of turns, no clock). */
async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let turn = 0; turn < 2_000; turn++) {
    if (await condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.fail(`never: ${what}`);
}
