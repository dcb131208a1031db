import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ReceiverLanes, SLOW_RECEIVER_MS } from "../../../plugins/webhooks/receiver-lanes.ts";

describe("receiver lanes", () => {
  it("queue as many again as a receiver takes at once; a receiver slower than SLOW_RECEIVER_MS gets no more, each delivery put back for its turn; other lanes stay open", async () => {
    let now = 0;
    const lanes = new ReceiverLanes(2, () => now, () => 0);
    const never = () => new Promise<void>(() => undefined);
    for (let i = 0; i < 4; i++) assert.ok("sending" in lanes.offer("http://slow:1", `d${i}`, never), `request ${i} queued`);
    // Out for no longer than SLOW_RECEIVER_MS: still taken.
    now = SLOW_RECEIVER_MS;
    assert.ok("sending" in lanes.offer("http://slow:1", "d4", never));
    // Its two requests have been out for 3 s: five in the lane, two at a time, at that pace; each delivery put back
    // waits behind those put back before it, and one that comes back keeps its place.
    now = 3_000;
    assert.deepEqual(lanes.offer("http://slow:1", "a", never), { retryInMs: 9_000 });
    assert.deepEqual(lanes.offer("http://slow:1", "b", never), { retryInMs: 10_500 });
    assert.deepEqual(lanes.offer("http://slow:1", "a", never), { retryInMs: 10_500 });
    let answered = 0;
    const fast = Array.from({ length: 10 }, (_, i) => lanes.offer("http://fast:1", `f${i}`, async () => void answered++));
    assert.ok(fast.every((answer) => "sending" in answer), "a fast receiver's lane takes all ten");
    await Promise.all(fast.map((answer) => ("sending" in answer ? answer.sending : undefined)));
    assert.equal(answered, 10);
  });
});
