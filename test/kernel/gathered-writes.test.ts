import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { GatheredWrites } from "../../src/index.ts";

/** A writeAll that records each call's items, and fails each call holding an item of `failing`. */
function recording(failing: ReadonlySet<string> = new Set()) {
  const calls: string[][] = [];
  const writeAll = async (items: readonly string[]) => {
    calls.push([...items]);
    if (items.some((item) => failing.has(item))) throw new Error(`failed: ${items.join(",")}`);
  };
  return { calls, writeAll };
}

const outcomes = (writes: Array<Promise<void>>) => Promise.all(writes.map((write) => write.then(() => "written", (error: Error) => error.message)));

describe("GatheredWrites", () => {
  it("writes the items asked within gatherMs of the first with one call, and those asked later with the next", async () => {
    const { calls, writeAll } = recording();
    const gathered = new GatheredWrites(writeAll, 20);
    const first = [gathered.write("a"), gathered.write("b")];
    await new Promise((resolve) => setTimeout(resolve, 5));
    first.push(gathered.write("c"));
    assert.deepEqual(calls, [], "nothing written before gatherMs");
    assert.deepEqual(await outcomes(first), ["written", "written", "written"]);
    await gathered.write("d");
    assert.deepEqual(calls, [["a", "b", "c"], ["d"]]);
  });

  it("writes at once once maxItems are asked", async () => {
    const { calls, writeAll } = recording();
    const gathered = new GatheredWrites(writeAll, 60_000, 3);
    assert.deepEqual(await outcomes(["a", "b", "c"].map((item) => gathered.write(item))), ["written", "written", "written"]);
    assert.deepEqual(calls, [["a", "b", "c"]]);
  });

  it("writes each item of a failed call again alone: only the item that fails alone rejects", async () => {
    const { calls, writeAll } = recording(new Set(["b"]));
    const gathered = new GatheredWrites(writeAll, 0);
    assert.deepEqual(await outcomes(["a", "b", "c"].map((item) => gathered.write(item))), ["written", "failed: b", "written"]);
    assert.deepEqual(calls, [["a", "b", "c"], ["a"], ["b"], ["c"]]);
  });

  it("a writeAll that throws at once rejects its items as one that rejects does", async () => {
    const gathered = new GatheredWrites<string>(() => {
      throw new Error("no storage");
    }, 0);
    assert.deepEqual(await outcomes([gathered.write("a"), gathered.write("b")]), ["no storage", "no storage"]);
  });

  it("refuses a gatherMs or maxItems it cannot use", () => {
    const { writeAll } = recording();
    assert.throws(() => new GatheredWrites(writeAll, -1), RangeError);
    assert.throws(() => new GatheredWrites(writeAll, Number.NaN), RangeError);
    assert.throws(() => new GatheredWrites(writeAll, 10, 0), RangeError);
  });
});
