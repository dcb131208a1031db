import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve, dirname } from "node:path";
import { describe, it } from "node:test";

const root = resolve(import.meta.dirname, "..");

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

/** Every relative import of a file, as a path relative to the repository root. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specifiers = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?from\s+["'](\.[^"']+)["']/g)].map((match) => match[1]!);
  return specifiers.map((specifier) => relative(root, resolve(dirname(file), specifier)));
}

/** The package's exports "." and "./testkit": an outside plugin or adapter author has exactly these. */
const PUBLIC_ENTRY_POINTS = ["src/index.ts", "src/testkit/index.ts"];

function violations(area: string, forbidden: (target: string, file: string) => boolean): string[] {
  return sourceFiles(join(root, area)).flatMap((file) =>
    importsOf(file)
      .filter((target) => forbidden(target, relative(root, file)))
      .map((target) => `${relative(root, file)} imports ${target}`),
  );
}

describe("dependency rule (docs/architecture.md)", () => {
  it("src imports nothing from adapters or plugins", () => {
    assert.deepEqual(violations("src", (target) => target.startsWith("adapters/") || target.startsWith("plugins/")), []);
  });

  it("adapters never import plugins", () => {
    assert.deepEqual(violations("adapters", (target) => target.startsWith("plugins/")), []);
  });

  it("plugins and adapters import src only through its public entry points, as an outside author does", () => {
    for (const area of ["plugins", "adapters"]) {
      assert.deepEqual(violations(area, (target) => target.startsWith("src/") && !PUBLIC_ENTRY_POINTS.includes(target)), []);
    }
  });

  it("plugins import no adapter, and only the public index of another plugin", () => {
    assert.deepEqual(
      violations("plugins", (target, file) => {
        if (target.startsWith("adapters/")) return true;
        const [, own] = file.split("/");
        const [area, other, ...rest] = target.split("/");
        return area === "plugins" && other !== own && rest.join("/") !== "index.ts";
      }),
      [],
    );
  });
});
