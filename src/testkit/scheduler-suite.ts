import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import type { Scheduler } from "../ports/scheduler.ts";

/** How the suite drives a scheduler: its own notion of time, moved forward on demand. */
export interface SchedulerHarness {
  scheduler: Scheduler;
  /** The scheduler's current time (epoch ms). */
  now(): number;
  /** Lets `ms` pass and everything that fell due fire (and its wake settle). */
  pass(ms: number): Promise<void>;
  dispose?(): void | Promise<void>;
}

/**
 * The Scheduler port's conformance suite: one alarm, replaced by every `arm`,
 * waking the runner at (not before) the armed time, silent after `stop`.
 */
export function schedulerConformance(adapterName: string, makeHarness: () => SchedulerHarness | Promise<SchedulerHarness>): void {
  describe(`Scheduler conformance: ${adapterName}`, () => {
    let harness: SchedulerHarness | undefined;
    afterEach(async () => {
      await harness?.scheduler.stop();
      await harness?.dispose?.();
      harness = undefined;
    });

    async function started(onWake?: (wakes: number) => void) {
      harness = await makeHarness();
      const state = { wakes: 0 };
      harness.scheduler.start(async () => {
        state.wakes++;
        onWake?.(state.wakes);
      });
      return { h: harness, state };
    }

    it("wakes at the armed time, not before, and once", async () => {
      const { h, state } = await started();
      h.scheduler.arm(h.now() + 1_000);
      await h.pass(999);
      assert.equal(state.wakes, 0);
      await h.pass(1);
      assert.equal(state.wakes, 1);
      await h.pass(10_000);
      assert.equal(state.wakes, 1);
    });

    it("keeps a single alarm: arming again replaces the previous time, later or earlier", async () => {
      const { h, state } = await started();
      h.scheduler.arm(h.now() + 1_000);
      h.scheduler.arm(h.now() + 5_000);
      await h.pass(4_999);
      assert.equal(state.wakes, 0, "the first time was replaced");
      await h.pass(1);
      assert.equal(state.wakes, 1);
      h.scheduler.arm(h.now() + 5_000);
      h.scheduler.arm(h.now() + 1_000);
      await h.pass(1_000);
      assert.equal(state.wakes, 2);
      await h.pass(10_000);
      assert.equal(state.wakes, 2, "the replaced later time never fires");
    });

    it("disarms with null", async () => {
      const { h, state } = await started();
      h.scheduler.arm(h.now() + 1_000);
      h.scheduler.arm(null);
      await h.pass(5_000);
      assert.equal(state.wakes, 0);
    });

    it("wakes soon for a time already past", async () => {
      const { h, state } = await started();
      h.scheduler.arm(h.now() - 60_000);
      await h.pass(0);
      assert.equal(state.wakes, 1);
    });

    it("follows the alarm that a wake arms", async () => {
      const { h, state } = await started((wakes) => {
        if (wakes < 3) h.scheduler.arm(h.now() + 1_000);
      });
      h.scheduler.arm(h.now() + 1_000);
      await h.pass(1_000);
      await h.pass(1_000);
      await h.pass(1_000);
      await h.pass(5_000);
      assert.equal(state.wakes, 3);
    });

    it("never wakes after stop", async () => {
      const { h, state } = await started();
      h.scheduler.arm(h.now() + 1_000);
      await h.scheduler.stop();
      h.scheduler.arm(h.now() + 500);
      await h.pass(5_000);
      assert.equal(state.wakes, 0);
    });
  });
}
