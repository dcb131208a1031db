import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SERVER_HEAP_GROWING_PERCENT } from "../../server/heap-growth.ts";
import { projectModule, runModuleScript } from "../support/module-script.ts";

/** What limitHeapGrowth answers in a node process started with `flags`. */
function heapGrowthIn(flags: string[]): string {
  const run = runModuleScript(`import { limitHeapGrowth } from ${projectModule("server/heap-growth.ts")}; process.stdout.write(String(limitHeapGrowth()));`, flags);
  assert.equal(run.status, 0, run.stderr);
  return run.stdout;
}

describe("the server's heap growth", () => {
  it("is set to its percent in a process started without one, and left to node's command line when it names one", () => {
    assert.equal(SERVER_HEAP_GROWING_PERCENT, 50);
    assert.equal(heapGrowthIn([]), "50");
    assert.equal(heapGrowthIn(["--heap-growing-percent=30"]), "undefined");
    assert.equal(heapGrowthIn(["--heap_growing_percent=30"]), "undefined");
  });
});
