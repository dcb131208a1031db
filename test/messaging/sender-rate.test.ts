import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JobRecord } from "../../src/index.ts";
import { SenderSchedule } from "../../src/messaging/sender-schedule.ts";
import { memorySms, type MemorySms } from "../../adapters/sms/memory/index.ts";
import { startTestKit, type TestKit } from "../support/test-kit.ts";

const TO = "+15555550100";
const SECOND = 1_000;

async function sendTexts(t: TestKit, count: number, prefix = "text"): Promise<void> {
  for (let i = 1; i <= count; i++) await t.kit.outbox.send({ companyId: t.company.companyId, to: TO, body: `${prefix} ${i}`, kind: "test" });
}

const bodies = (t: TestKit) => t.sms.sent.map((message) => message.body);

describe("texts at their sender's rate", () => {
  it("a burst from one sender falls due at the sender's rate and goes out in order", async () => {
    const t = await startTestKit({ config: { messaging: { ratePerSecond: 2 } } });
    const start = t.clock.now();
    await sendTexts(t, 5);
    const due = (await t.kit.storage.collection<JobRecord>("reachkit_jobs").find({ where: { type: "reachkit.outbox.send" }, orderBy: [{ field: "id" }] })).items;
    assert.deepEqual(
      due.map((job) => job.runAt - start),
      [0, 0, SECOND, SECOND, 2 * SECOND],
    );
    await t.scheduler.flush();
    assert.deepEqual(bodies(t), ["text 1", "text 2"]);
    await t.scheduler.advance(2 * SECOND);
    assert.deepEqual(bodies(t), ["text 1", "text 2", "text 3", "text 4", "text 5"]);
    await t.stop();
  });

  it("texts due together beyond the rate wait in the queue, not in the job runner: an opt-in due after them is processed at once, its text goes behind them", async () => {
    const t = await startTestKit({ config: { messaging: { ratePerSecond: 1 } } });
    await sendTexts(t, 3, "burst");
    // The job runner was late: all three are due when it wakes, and the opt-in after them.
    t.clock.advance(10 * SECOND);
    const optIn = await t.request({ method: "POST", url: "/v1/subscriptions", body: { user: { phone: TO }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING" } });
    assert.equal(optIn.status, 202);
    await t.scheduler.flush();
    assert.deepEqual(bodies(t), ["burst 1"], "one text this second");
    const subscriptions = await t.kit.plugin("subscriptions").subscriptions(t.company.companyId, { phone: TO });
    assert.deepEqual(subscriptions.map((s) => s.state), ["pending"], "the opt-in did not wait for the texts");
    assert.equal((await t.kit.jobs.list({ type: "reachkit.outbox.send", status: "queued" })).length, 3);
    for (let second = 1; second <= 3; second++) await t.scheduler.advance(SECOND);
    assert.deepEqual(bodies(t).slice(0, 3), ["burst 1", "burst 2", "burst 3"]);
    assert.match(bodies(t)[3] ?? "", /Reply Y/);
    assert.equal(bodies(t).length, 4);
    assert.deepEqual((await t.kit.outbox.list({ to: TO })).map((m) => m.attempts), [1, 1, 1, 1], "a text held back used no attempt");
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

describe("SenderSchedule", () => {
  it("hands out due times with at most the rate's texts in any window, never decreasing", () => {
    const twoASecond = new SenderSchedule(2);
    assert.deepEqual([0, 0, 0, 0, 5_000].map((now) => twoASecond.reserve(now)), [0, 0, 1_000, 1_000, 5_000]);
    const everyTwoSeconds = new SenderSchedule(0.5);
    assert.deepEqual([0, 0, 0].map((now) => everyTwoSeconds.reserve(now)), [0, 2_000, 4_000]);
  });

  it("holds a text back while the window is full, and a text not held back behind those that are", () => {
    const schedule = new SenderSchedule(2);
    assert.deepEqual([0, 0, 0, 0, 0].map((now) => schedule.holdBack(now, now)), [undefined, undefined, 1_000, 1_000, 2_000]);
    // At 1,000 a text due at 900 comes first (it is due before the held ones): it goes behind them.
    assert.equal(schedule.holdBack(1_000, 900), 2_000);
    assert.deepEqual([1_000, 1_000].map((now) => schedule.holdBack(now, 1_000)), [undefined, undefined], "the held texts go at their time");
    assert.deepEqual([2_000, 2_000].map((now) => schedule.holdBack(now, 2_000)), [undefined, undefined]);
  });
});
