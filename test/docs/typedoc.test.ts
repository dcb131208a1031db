import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { it } from "node:test";

it("builds the API reference with no warnings (npm run docs)", async () => {
  const typedoc = resolve(import.meta.dirname, "../../node_modules/typedoc/bin/typedoc");
  // typedoc.json treats warnings as errors, so a warning fails the run.
  const { stdout, stderr } = await promisify(execFile)(process.execPath, [typedoc, "--emit", "none"], {
    cwd: resolve(import.meta.dirname, "../.."),
  });
  assert.doesNotMatch(`${stdout}${stderr}`, /warning/i);
});
