import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ReceiverLanes } from "../../../plugins/webhooks/receiver-lanes.ts";

/** A task that runs until `finish` is called, noting when it started. */
function heldTasks() {
  const started: string[] = [];
  const finishers = new Map<string, (fail?: boolean) => void>();
  const task = (name: string) => () => {
    started.push(name);
    return new Promise<string>((resolve, reject) => finishers.set(name, (fail) => (fail ? reject(new Error(`${name} failed`)) : resolve(name))));
  };
  const finish = async (name: string, fail = false) => {
    finishers.get(name)!(fail);
    // The slot is handed over once the task's promise has settled.
    for (let turn = 0; turn < 5; turn++) await Promise.resolve();
  };
  return { started, task, finish };
}

/** A request as a drain makes one: a slot of `receiver` taken (at once, or once one is handed over), given back when `work` settles. */
async function inLane<R>(lanes: ReceiverLanes, receiver: string, work: () => Promise<R>): Promise<R> {
  const slot = lanes.acquire(receiver);
  if (slot !== undefined) await slot;
  try {
    return await work();
  } finally {
    lanes.release(receiver);
  }
}

describe("receiver lanes", () => {
  it("run at most `concurrency` requests of a receiver at once, the others in order as slots free (a failed one's too); other receivers apart", async () => {
    const lanes = new ReceiverLanes(2);
    const { started, task, finish } = heldTasks();
    const results = ["a1", "a2", "a3", "a4"].map((name) => inLane(lanes, "a", task(name)).catch((error: Error) => error.message));
    const other = inLane(lanes, "b", task("b1"));
    assert.deepEqual(started, ["a1", "a2", "b1"]);
    await finish("a2", true);
    assert.deepEqual(started, ["a1", "a2", "b1", "a3"]);
    await finish("a1");
    assert.deepEqual(started, ["a1", "a2", "b1", "a3", "a4"]);
    await finish("a3");
    await finish("a4");
    await finish("b1");
    assert.deepEqual(await Promise.all(results), ["a1", "a2 failed", "a3", "a4"]);
    assert.equal(await other, "b1");
  });

  it("have room for another page of a receiver only once fewer than `concurrency` of its requests wait", async () => {
    const lanes = new ReceiverLanes(1);
    const { task, finish } = heldTasks();
    await lanes.roomFor("a");
    for (const name of ["a1", "a2"]) void inLane(lanes, "a", task(name));
    let room = false;
    void lanes.roomFor("a").then(() => (room = true));
    for (let turn = 0; turn < 5; turn++) await Promise.resolve();
    assert.equal(room, false);
    await finish("a1");
    assert.equal(room, true);
    await finish("a2");
  });
});
