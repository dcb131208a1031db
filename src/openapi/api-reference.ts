import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import * as v from "valibot";
import { notFound } from "../http/errors.ts";
import { defineRoute, reply, type AnyRoute } from "../http/route.ts";

export const OPENAPI_PATH = "/openapi.json";
export const DOCS_PATH = "/docs";

/** The files of swagger-ui-dist the page loads, and their types. Nothing else of the package is served. */
const RENDERER_FILES: ReadonlyMap<string, string> = new Map([
  ["swagger-ui.css", "text/css; charset=utf-8"],
  ["swagger-ui-bundle.js", "text/javascript; charset=utf-8"],
  ["favicon-32x32.png", "image/png"],
]);
/** Starts the renderer on the page's element; a file of its own, so the page needs no inline script. */
const START_FILE = "reference.js";
const START_SCRIPT = `"use strict";
(function () {
  var root = document.getElementById("reference");
  window.ui = SwaggerUIBundle({
    url: root.getAttribute("data-spec"),
    domNode: root,
    deepLinking: true,
    docExpansion: "list",
    defaultModelsExpandDepth: 0,
    // The public validator badge would call out to another site.
    validatorUrl: null,
  });
})();
`;

export interface ApiReferenceOptions {
  /** The document, built once on first use (the route table is fixed by then). */
  document(): unknown;
  /** Origins of the kit's hosts: the page's "Try it out" may call them. */
  apiOrigins(): readonly string[];
}

/**
 * `GET /openapi.json` and the reference page at `GET /docs` (Swagger UI, its
 * files served from node_modules: no CDN). Every link is relative, so both work
 * under any mount prefix.
 */
export function apiReferenceRoutes(options: ApiReferenceOptions): AnyRoute[] {
  let documentJson: string | undefined;
  const files = new Map<string, Buffer>();
  const rendererDir = () => dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
  const csp = () =>
    [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "img-src 'self' data:",
      `connect-src 'self' ${options.apiOrigins().join(" ")}`.trim(),
      "frame-ancestors 'none'",
      "base-uri 'none'",
      "form-action 'none'",
    ].join("; ");

  return [
    defineRoute({
      method: "GET",
      path: OPENAPI_PATH,
      auth: { kind: "none" },
      summary: "Get the OpenAPI document",
      docs: {
        operationId: "getOpenApiDocument",
        tag: "API reference",
        description: "This document: OpenAPI 3.1, generated from the kit's route table and its schemas.",
        responses: { 200: { description: "The OpenAPI 3.1 document", schema: v.object({ openapi: v.string(), info: v.object({ title: v.string(), version: v.string() }) }) } },
        example: {},
      },
      handler: () => reply.bytes(200, "application/json", (documentJson ??= JSON.stringify(options.document())), { "cache-control": "no-cache" }),
    }),
    defineRoute({
      method: "GET",
      path: DOCS_PATH,
      auth: { kind: "none" },
      summary: "Get the API reference page",
      docs: {
        operationId: "getApiReference",
        tag: "API reference",
        description: "The API reference for people: this document rendered by Swagger UI.",
        responses: { 200: { description: "The page", html: true } },
        example: {},
      },
      handler({ path }) {
        // "/docs" and "/docs/" both reach here; relative links must resolve from either.
        const [assets, spec] = path.endsWith("/") ? ["assets/", "../openapi.json"] : ["docs/assets/", "openapi.json"];
        return reply.html(200, page(assets, spec), {
          "content-security-policy": csp(),
          "x-content-type-options": "nosniff",
          "referrer-policy": "no-referrer",
          "cache-control": "no-cache",
        });
      },
    }),
    defineRoute({
      method: "GET",
      path: `${DOCS_PATH}/assets/:file`,
      auth: { kind: "none" },
      summary: "Get a file of the API reference page",
      docs: {
        operationId: "getApiReferenceAsset",
        tag: "API reference",
        params: { file: `One of ${[...RENDERER_FILES.keys(), START_FILE].join(", ")}` },
        responses: { 200: { description: "The file" }, 404: { description: "No such file" } },
        example: { params: { file: "swagger-ui.css" } },
      },
      handler({ params }) {
        const name = params.file ?? "";
        const headers = { "cache-control": "public, max-age=3600", "x-content-type-options": "nosniff" };
        if (name === START_FILE) return reply.bytes(200, "text/javascript; charset=utf-8", START_SCRIPT, headers);
        // A map, not an object: "__proto__" or "constructor" must not look like a file.
        const type = RENDERER_FILES.get(name);
        if (!type) throw notFound(`no file ${name} in the API reference`);
        let file = files.get(name);
        if (!file) files.set(name, (file = readFileSync(join(rendererDir(), name))));
        return reply.bytes(200, type, file, headers);
      },
    }),
  ];
}

function page(assets: string, spec: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>reachkit API reference</title>
<link rel="stylesheet" href="${assets}swagger-ui.css">
<link rel="icon" type="image/png" href="${assets}favicon-32x32.png">
</head>
<body>
<div id="reference" data-spec="${spec}"></div>
<script src="${assets}swagger-ui-bundle.js"></script>
<script src="${assets}${START_FILE}"></script>
</body>
</html>
`;
}
