import assert from "node:assert/strict";
import { it } from "node:test";
import { nodeScheduleScheduler } from "../../../adapters/scheduler/node-schedule/index.ts";
import { waitUntil } from "../../support/wait.ts";

it("wakes again at the next alarm while an earlier wake's jobs still run, and stop waits for both", async () => {
  const scheduler = nodeScheduleScheduler();
  let wakes = 0;
  const releases: Array<() => void> = [];
  scheduler.start(() => {
    wakes++;
    return new Promise<void>((resolve) => releases.push(resolve));
  });
  scheduler.arm(Date.now());
  await waitUntil("the first wake", () => wakes === 1, 5_000);
  // The first wake has not settled (one of its jobs is slow or stuck): the next alarm must still wake.
  scheduler.arm(Date.now());
  await waitUntil("the second wake", () => wakes === 2, 5_000);

  let stopped = false;
  const stopping = scheduler.stop().then(() => (stopped = true));
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(stopped, false, "stop waits for the wakes under way");
  for (const release of releases) release();
  await stopping;
  scheduler.arm(Date.now());
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(wakes, 2, "no wake after stop");
});

it("still wakes when an alarm's time passes while it is being set (node-schedule drops dates already past)", async () => {
  const scheduler = nodeScheduleScheduler();
  let wakes = 0;
  scheduler.start(async () => void wakes++);
  const realNow = Date.now;
  const at = realNow() + 5;
  // The first reading (the adapter's) sees the alarm ahead; every later one (node-schedule's) sees it gone by,
  // as when the process is descheduled for a few milliseconds between the two.
  let readings = 0;
  Date.now = () => realNow() + (readings++ === 0 ? 0 : 10);
  try {
    scheduler.arm(at);
  } finally {
    Date.now = realNow;
  }
  await waitUntil("the wake for the alarm that passed", () => wakes === 1, 5_000);
  await scheduler.stop();
});
