import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { it } from "node:test";

// docs/writing-a-plugin.md quotes the example plugin file by file; test/package builds and runs
// those files against the installed package. This keeps the page and the files the same.

const root = join(import.meta.dirname, "../..");
const example = join(root, "examples/plugin-feedback");
const page = readFileSync(join(root, "docs/writing-a-plugin.md"), "utf8");

/** Each quoted file: a block that starts with `// examples/plugin-feedback/<file>`, or follows a line naming it. */
function quotedFiles(): Map<string, string> {
  const quoted = new Map<string, string>();
  for (const [, path, text] of page.matchAll(/```\w+\n\/\/ (examples\/plugin-feedback\/\S+)\n([\s\S]*?)\n```/g)) quoted.set(path!, text!);
  for (const [, path, text] of page.matchAll(/`(examples\/plugin-feedback\/\S+)`:\n\n```\w+\n([\s\S]*?)\n```/g)) quoted.set(path!, text!);
  return quoted;
}

it("quotes every file of examples/plugin-feedback exactly as it is", () => {
  const files = readdirSync(example, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !/[/\\](dist|node_modules)([/\\]|$)/.test(entry.parentPath))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).replaceAll("\\", "/"))
    .sort();
  const quoted = quotedFiles();
  assert.deepEqual([...quoted.keys()].sort(), files);
  for (const [path, text] of quoted) assert.equal(text, readFileSync(join(root, path), "utf8").trimEnd(), `${path} differs from its quote`);
});
