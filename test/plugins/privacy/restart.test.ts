import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fakeClock } from "../../../adapters/clock/index.ts";
import { memorySms } from "../../../adapters/sms/memory/index.ts";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import { definePlugin } from "../../../src/index.ts";
import { startTestKit, type TestKit } from "../../support/test-kit.ts";
import { createRequest, fetchRequest, privacyKitPlugins, seedSubject, subjectData } from "./support.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";

/** A plugin whose deletion hook holds until released: the kit is stopped while the privacy job is under way. */
function slowDeletionPlugin() {
  let entered!: () => void;
  let release!: () => void;
  const inHook = new Promise<void>((resolve) => (entered = resolve));
  const gate = new Promise<void>((resolve) => (release = resolve));
  const plugin = definePlugin({
    name: "slow-deletion",
    async deleteSubjectData() {
      entered();
      await gate;
      return 0;
    },
  });
  return { plugin, inHook, release };
}

describe("privacy processing across a restart", () => {
  it("a job interrupted by the kit stopping completes on the next kit of the same SQLite file", async () => {
    const filename = join(temporaryDirectory("privacy"), "reachkit.db");
    const clock = fakeClock("2026-03-01T12:00:00.000Z");
    const sms = memorySms();
    const slow = slowDeletionPlugin();
    const before = await startTestKit({ storage: sqliteStorage({ filename }), clock, sms, plugins: privacyKitPlugins({}, [slow.plugin]) });
    await seedSubject(before, before.company.legacyToken);
    const created = before.json(await createRequest(before, { subjectPhone: "+19148440001" }));

    const running = before.scheduler.flush();
    await slow.inHook; // the job is deleting
    const stopping = before.stop();
    slow.release();
    await Promise.all([running, stopping]);

    const afterRestart = await startTestKit({ storage: sqliteStorage({ filename }), clock, sms, plugins: privacyKitPlugins(), bare: true });
    const t: TestKit = { ...afterRestart, company: before.company, request: (request) => afterRestart.request({ ...request, token: request.token ?? before.company.apiKey }) };
    const interrupted = t.json(await fetchRequest(t, created.id));
    assert.equal(interrupted.processed, false, "the stop interrupted it");
    assert.equal(interrupted.processingStartDateTime, "2026-03-01T12:00:00.000+0000");
    assert.equal((await subjectData(t, t.company.companyId)).messages, 3, "the outbox step had not run");
    assert.equal((await t.kit.jobs.list({ type: "privacy.process", status: "queued" })).length, 1, "the job waits for its retry");

    await t.scheduler.advance(60_000);
    const done = t.json(await fetchRequest(t, created.id));
    assert.equal(done.processed, true);
    assert.equal(done.processingStartDateTime, "2026-03-01T12:00:00.000+0000", "started by the first attempt");
    assert.match(done.processingEndDateTime, /^2026-03-01T12:00:0\d\.\d{3}\+0000$/);
    assert.deepEqual(await subjectData(t, t.company.companyId), { subscriber: false, subscriptions: 0, changes: 0, signUps: 0, messages: 0 });
    await t.stop();
  });
});
