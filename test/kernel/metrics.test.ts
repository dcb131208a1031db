import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { startTestKit } from "../support/test-kit.ts";

const HOUR = 3_600_000;
const lines = async (text: Promise<string>) => (await text).split("\n");

describe("kit.metrics", () => {
  it("counts each kit's requests by route pattern and status, apart from any other kit in the process", async () => {
    const first = await startTestKit();
    const second = await startTestKit();
    await first.request({ url: "/v1/me" });
    await first.request({ url: "/v1/me" });
    await first.request({ url: "/v1/me", token: null });
    await first.request({ url: "/v1/nowhere/at/all" });
    const text = await lines(first.kit.metrics.text());
    assert.ok(text.includes('reachkit_http_request_duration_seconds_count{method="GET",route="/v1/me",status="200"} 2'), text.join("\n"));
    assert.ok(text.includes('reachkit_http_request_duration_seconds_count{method="GET",route="/v1/me",status="401"} 1'));
    assert.ok(text.includes('reachkit_http_request_duration_seconds_count{method="GET",route="(no route)",status="404"} 1'), "never the raw path");
    assert.equal((await second.kit.metrics.text()).includes('route="/v1/me"'), false);
    await first.stop();
    await second.stop();
  });

  it("shows the job queue: queued, due and how long the oldest due job has waited", async () => {
    const t = await startTestKit();
    const now = t.clock.now();
    for (const runAt of [now, now + 1_000, now + HOUR]) await t.kit.jobs.enqueue({ type: "test.waiting", payload: {}, runAt });
    t.clock.advance(31_000); // the clock alone: the manual scheduler runs nothing
    const text = await lines(t.kit.metrics.text());
    for (const line of ['reachkit_jobs{state="queued"} 3', 'reachkit_jobs{state="due"} 2', 'reachkit_jobs{state="running"} 0', "reachkit_jobs_oldest_due_age_seconds 31"]) {
      assert.ok(text.includes(line), `${line}\n---\n${text.join("\n")}`);
    }
    await t.stop();
  });
});
