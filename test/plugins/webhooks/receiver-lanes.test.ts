import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ReceiverLanes, SLOW_RECEIVER_MS } from "../../../plugins/webhooks/receiver-lanes.ts";

describe("receiver lanes", () => {
  it("queue as many again as a receiver takes at once; a receiver slower than SLOW_RECEIVER_MS gets no more, and other receivers' lanes stay open", async () => {
    let now = 0;
    const lanes = new ReceiverLanes(2, () => now);
    const never = () => new Promise<void>(() => undefined);
    for (let i = 0; i < 4; i++) assert.ok("sending" in lanes.offer("http://slow:1", never), `request ${i} queued`);
    // Out for less than SLOW_RECEIVER_MS: still taken.
    now = SLOW_RECEIVER_MS;
    assert.ok("sending" in lanes.offer("http://slow:1", never));
    // Its two requests have been out for 3 s: five in the lane, two at a time, is 7.5 s at that pace.
    now = 3_000;
    assert.deepEqual(lanes.offer("http://slow:1", never), { retryInMs: 7_500 });
    let answered = 0;
    const fast = Array.from({ length: 10 }, () => lanes.offer("http://fast:1", async () => void answered++));
    assert.ok(fast.every((answer) => "sending" in answer), "a fast receiver's lane takes all ten");
    await Promise.all(fast.map((answer) => ("sending" in answer ? answer.sending : undefined)));
    assert.equal(answered, 10);
  });
});
