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
  it("a text held back goes at the time it was given even when the texts before it went out late: held back once, in order", async () => {
    const t = await startTestKit({ config: { messaging: { ratePerSecond: 2 } } });
    await sendTexts(t, 6);
    // The runner wakes late: all six are due; two go, two are held for the next second, two for the one after.
    t.clock.advance(10 * SECOND);
    await t.scheduler.flush();
    assert.deepEqual(bodies(t), ["text 1", "text 2"]);
    // Late again: texts 3 and 4 leave 400 ms after their time, so the window is full until 400 ms after 5 and 6 are due.
    t.clock.advance(1_400);
    await t.scheduler.flush();
    assert.deepEqual(bodies(t), ["text 1", "text 2", "text 3", "text 4"]);
    await t.scheduler.advance(600);
    assert.deepEqual(bodies(t), ["text 1", "text 2", "text 3", "text 4", "text 5", "text 6"], "5 and 6 go at their time (the limiter waits the 400 ms), not held back again");
    assert.deepEqual((await t.kit.outbox.list({ to: TO })).map((m) => m.attempts), [1, 1, 1, 1, 1, 1]);
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
    assert.deepEqual(["a", "b", "c", "d", "e"].map((text) => schedule.holdBack(0, text)), [undefined, undefined, 1_000, 1_000, 2_000]);
    // At 1,000 a text that was not held back comes first: it goes behind the held ones.
    assert.equal(schedule.holdBack(1_000, "f"), 2_000);
    assert.deepEqual(["c", "d"].map((text) => schedule.holdBack(1_000, text)), [undefined, undefined], "the held texts go at their time");
    assert.deepEqual(["e", "f"].map((text) => schedule.holdBack(2_000, text)), [undefined, undefined]);
  });

  it("lets a text through when the window frees within one text's share of it: the limiter waits that long", () => {
    const fullUntil1000 = () => {
      const schedule = new SenderSchedule(2);
      assert.deepEqual(["a", "b"].map((text) => schedule.holdBack(0, text)), [undefined, undefined]);
      return schedule;
    };
    assert.equal(fullUntil1000().holdBack(600, "c"), undefined, "400 ms to wait, within an interval of 500");
    assert.equal(fullUntil1000().holdBack(400, "c"), 1_000, "600 ms to wait: held back");
  });

  for (const { rate, texts } of [
    { rate: 30, texts: 900 },
    { rate: 2, texts: 40 },
    { rate: 0.5, texts: 10 },
  ]) {
    it(`${texts} texts due at once at ${rate} a second, with a runner late by up to half a second at each wake: sent at the rate, in order, each held back at most once`, () => {
      const { starts, holdBacks } = runLateRunner(new SenderSchedule(rate), texts, rate);
      assert.deepEqual(starts.map((start) => start.text), Array.from({ length: texts }, (_, index) => index), "in order");
      const windowMs = (Math.max(1, Math.floor(rate)) / rate) * 1_000;
      const perWindow = Math.max(1, Math.floor(rate));
      for (let index = perWindow; index < starts.length; index++) {
        assert.ok(starts[index]!.at - starts[index - perWindow]!.at >= windowMs, `no more than ${perWindow} texts in ${windowMs} ms`);
      }
      assert.ok(Math.max(...holdBacks) <= 1, `held back at most once, not ${Math.max(...holdBacks)} times`);
      const seconds = starts.at(-1)!.at / 1_000;
      // The last text leaves within the late runner's half second and one interval of its place at the rate.
      assert.ok(seconds <= (texts - perWindow) / rate + 0.5 + 1 / rate, `${texts} texts took ${seconds} s at ${rate} a second`);
    });
  }
});

/**
 * A runner that wakes up to 500 ms after the earliest due time (a loaded event loop; a fixed
 * sequence, no randomness), takes every due text in order of due time then queueing, and hands
 * those let through to a sliding-window limiter. Returns when each text started and how often each
 * was held back.
 */
function runLateRunner(schedule: SenderSchedule, texts: number, rate: number): { starts: { text: number; at: number }[]; holdBacks: number[] } {
  const perWindow = Math.max(1, Math.floor(rate));
  const windowMs = (perWindow / rate) * 1_000;
  const due = Array.from({ length: texts }, (_, text) => ({ text, at: 0 }));
  const holdBacks = new Array<number>(texts).fill(0);
  const starts: { text: number; at: number }[] = [];
  for (let wake = 0; due.length > 0; wake++) {
    due.sort((a, b) => a.at - b.at || a.text - b.text);
    const now = due[0]!.at + ((wake * 137) % 500);
    for (const job of due.filter((job) => job.at <= now)) {
      due.splice(due.indexOf(job), 1);
      const later = schedule.holdBack(now, String(job.text));
      if (later !== undefined) {
        holdBacks[job.text]!++;
        due.push({ text: job.text, at: later });
        continue;
      }
      const windowStart = starts.at(-perWindow);
      starts.push({ text: job.text, at: Math.max(now, starts.at(-1)?.at ?? now, windowStart ? windowStart.at + windowMs : now) });
    }
  }
  return { starts, holdBacks };
}
