import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fakeClock } from "../../../adapters/clock/index.ts";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";
import { receiversClosedAfterEach, singleOptIn, startWebhookKit, type WebhookKit } from "./support.ts";

/** How long a held request waits before it is answered anyway: only if the kit's stop failed to interrupt it. */
const HELD_AT_MOST_MS = 5_000;

let t: WebhookKit | undefined;
const receiver = receiversClosedAfterEach(async () => {
  await t?.stop();
  t = undefined;
});

describe("a kit that stops while a webhook's request is out", () => {
  it("interrupts the request: not an attempt, its delivery due at once, and sent after the restart with the same webhook-id", async () => {
    const filename = join(temporaryDirectory("webhooks-stop"), "reachkit.db");
    const clock = fakeClock("2026-03-01T12:00:00.000Z");
    const first = await startWebhookKit({ storage: sqliteStorage({ filename }), clock });
    t = first;
    const receiving = await receiver(first.signingKey);
    const { arrived: arrival, release } = receiving.holdAnswers();
    const fallback = setTimeout(release, HELD_AT_MOST_MS);
    await first.createWebhook(receiving.url, ["sms.subscribed"]);
    await first.request({ method: "POST", url: "/v1/subscriptions", body: singleOptIn("+19148440060") });
    const draining = first.scheduler.flush();
    await arrival;
    await first.stop();
    t = undefined;
    release();
    clearTimeout(fallback);
    await draining.catch(() => {});

    t = await startWebhookKit({ storage: sqliteStorage({ filename }), clock, bare: true });
    const [interrupted] = await t.deliveries();
    assert.deepEqual([interrupted?.status, interrupted?.attempts, interrupted?.dueAt! <= clock.now()], ["pending", 0, true]);
    receiving.answer = () => ({ status: 200 });
    await t.scheduler.flush();
    const ids = receiving.requests.map((request) => String(request.headers["webhook-id"]));
    assert.deepEqual(ids, [interrupted!.id, interrupted!.id]);
    const [delivered] = await t.deliveries();
    assert.deepEqual([delivered?.status, delivered?.attempts], ["delivered", 1]);
  });
});
