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


  it("receivers that all look slow alike (the kit's own event loop is behind) keep their deliveries; one slower than the others by SLOWER_THAN_OTHERS does not", async () => {
    let now = 0;
    const lanes = new ReceiverLanes(2, () => now, () => 0);
    const never = () => new Promise<void>(() => undefined);
    for (const origin of ["http://a:1", "http://b:1"]) for (let i = 0; i < 4; i++) lanes.offer(origin, `${origin}-${i}`, never);
    now = 3 * SLOW_RECEIVER_MS;
    for (const origin of ["http://a:1", "http://b:1"]) assert.ok("sending" in lanes.offer(origin, `${origin}-late`, never), `${origin}: both lanes wait alike`);

    now = 0;
    const others = new ReceiverLanes(2, () => now, () => 0);
    for (let i = 0; i < 4; i++) others.offer("http://dead:1", `dead-${i}`, never);
    now = 4_000;
    const answers: Array<() => void> = [];
    for (let i = 0; i < 4; i++) others.offer("http://quick:1", `quick-${i}`, () => new Promise<void>((resolve) => answers.push(resolve)));
    now = 4_010;
    answers.splice(0).forEach((answer) => answer());
    await new Promise((resolve) => setImmediate(resolve));
    now = 4_020;
    assert.equal(answers.length, 2, "the quick receiver's next two requests are out");
    assert.ok("retryInMs" in others.offer("http://dead:1", "dead-late", never), "the dead receiver's delivery is put back");
    assert.ok("sending" in others.offer("http://quick:1", "quick-late", never));
  });
});
