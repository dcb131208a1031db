import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, it } from "node:test";
import { SERVER_HEAP_GROWING_PERCENT } from "../../server/heap-growth.ts";

/** What limitHeapGrowth answers in a node process started with `flags`. */
function heapGrowthIn(flags: string[]): string {
  const script = `import { limitHeapGrowth } from ${JSON.stringify(new URL("../../server/heap-growth.ts", import.meta.url).href)}; process.stdout.write(String(limitHeapGrowth()));`;
  return execFileSync(process.execPath, [...flags, "--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8" });
}

describe("the server's heap growth", () => {
  it("is set to its percent in a process started without one, and left to node's command line when it names one", () => {
    assert.equal(SERVER_HEAP_GROWING_PERCENT, 50);
    assert.equal(heapGrowthIn([]), "50");
    assert.equal(heapGrowthIn(["--heap-growing-percent=30"]), "undefined");
    assert.equal(heapGrowthIn(["--heap_growing_percent=30"]), "undefined");
  });
});
