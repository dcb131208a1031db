import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { describe, it } from "node:test";
import { readPhoneNumber } from "../../plugins/subscriptions/index.ts";

const root = resolve(import.meta.dirname, "../..");

/** The packages a module loads with its static value imports, following the repository's own files. */
function packagesLoadedBy(entry: string): Set<string> {
  const packages = new Set<string>();
  const visited = new Set<string>();
  const pending = [resolve(root, entry)];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (visited.has(file)) continue;
    visited.add(file);
    const text = readFileSync(file, "utf8");
    // `import type` / `export type` load nothing; dynamic import() and require() are not static.
    for (const [, specifier] of text.matchAll(/(?:^|\n)\s*(?:import|export)\s+(?!type\b)(?:[^;]*?from\s+)?["']([^"']+)["']/g)) {
      if (specifier!.startsWith(".")) pending.push(resolve(dirname(file), specifier!));
      else packages.add(specifier!.startsWith("@") ? specifier!.split("/").slice(0, 2).join("/") : specifier!.split("/")[0]!);
    }
  }
  assert.ok(visited.size > 50, `only ${visited.size} files reached from ${relative(root, entry)}`);
  return packages;
}

describe("what the self-hosted server loads at start-up", () => {
  it("leaves jose until the first id_token, and takes only the prom-client modules the kit uses", () => {
    const packages = packagesLoadedBy("server/server-kit.ts");
    assert.equal(packages.has("jose"), false, "about 40 ms of CPU at every start and CLI call");
    assert.equal(packages.has("prom-client"), false, "its index loads the OpenTelemetry API and the push gateway too");
  });

  it("leaves nodemailer and the AWS SDK until the first email and the first S3 call", () => {
    const packages = packagesLoadedBy("server/server-kit.ts");
    // About 50 ms and 250 ms of CPU at every start and CLI call, for servers that may use neither.
    assert.deepEqual([...packages].filter((name) => name === "nodemailer" || name.startsWith("@aws-sdk/")), []);
  });

  it("leaves libphonenumber-js (about 9 MB) until the first phone number is read", () => {
    const packages = packagesLoadedBy("server/server-kit.ts");
    assert.ok(packages.has("better-sqlite3") && packages.has("valibot"), [...packages].join(", "));
    assert.equal(packages.has("libphonenumber-js"), false);
    // Loaded on demand, with its full metadata (a region found from the number itself).
    assert.equal(readPhoneNumber("+44 1481 256789")?.region, "GG");
  });
});
