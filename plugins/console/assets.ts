import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineRoute, notFound, reply, type AnyRoute } from "../../src/index.ts";

const CSS = "text/css; charset=utf-8";
const JS = "text/javascript; charset=utf-8";

/** The files the console's pages load, each from where it lives: the console's own, and uPlot's from node_modules (no CDN). */
const FILES: ReadonlyMap<string, { type: string; path: () => string }> = new Map([
  ["console.css", { type: CSS, path: () => fileURLToPath(new URL("assets/console.css", import.meta.url)) }],
  ["console.js", { type: JS, path: () => fileURLToPath(new URL("assets/console.js", import.meta.url)) }],
  ["uPlot.min.css", { type: CSS, path: () => join(uplotDir(), "uPlot.min.css") }],
  ["uPlot.iife.min.js", { type: JS, path: () => join(uplotDir(), "uPlot.iife.min.js") }],
]);

const uplotDir = () => join(dirname(createRequire(import.meta.url).resolve("uplot/package.json")), "dist");

/** `GET /console/assets/:file`: the stylesheet and scripts, read once and kept. */
export function assetRoutes(): AnyRoute[] {
  const loaded = new Map<string, Buffer>();
  return [
    defineRoute({
      method: "GET",
      path: "/console/assets/:file",
      host: "ui",
      auth: { kind: "none" },
      summary: "Get a file of the console",
      docs: {
        operationId: "getConsoleAsset",
        tag: "Console",
        params: { file: `One of ${[...FILES.keys()].join(", ")}` },
        responses: { 200: { description: "The file" }, 404: { description: "No such file" } },
        example: { params: { file: "console.css" } },
      },
      handler({ params }) {
        const name = params.file ?? "";
        // A map, not an object: "__proto__" or "constructor" must not look like a file.
        const file = FILES.get(name);
        if (!file) throw notFound(`no file ${name} in the console`);
        let bytes = loaded.get(name);
        if (!bytes) loaded.set(name, (bytes = readFileSync(file.path())));
        return reply.bytes(200, file.type, bytes, { "cache-control": "public, max-age=3600", "x-content-type-options": "nosniff" });
      },
    }),
  ];
}
