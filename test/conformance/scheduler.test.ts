import { mock } from "node:test";
import { fakeClock } from "../../adapters/clock/index.ts";
import { manualScheduler } from "../../adapters/scheduler/manual/index.ts";
import { nodeScheduleScheduler } from "../../adapters/scheduler/node-schedule/index.ts";
import { schedulerConformance } from "../../src/testkit/index.ts";

schedulerConformance("manual", () => {
  const scheduler = manualScheduler(fakeClock());
  return { scheduler, now: () => scheduler.clock.now(), pass: (ms) => scheduler.advance(ms) };
});

// node-schedule runs on real timers; node:test's mock timers move them without sleeping.
schedulerConformance("node-schedule", () => {
  mock.timers.enable({ apis: ["setTimeout", "setImmediate", "Date"], now: Date.parse("2026-03-01T00:00:00Z") });
  return {
    scheduler: nodeScheduleScheduler(),
    now: () => Date.now(),
    async pass(ms) {
      mock.timers.tick(ms);
      // Let the wake's promise chain settle, then fire what it armed for "now".
      for (let i = 0; i < 5; i++) await Promise.resolve();
      mock.timers.tick(0);
      for (let i = 0; i < 5; i++) await Promise.resolve();
    },
    dispose: () => mock.timers.reset(),
  };
});
