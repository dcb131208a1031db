import * as v from "valibot";
import { defineRoute, notFound, unauthorized, type AnyRoute } from "../../src/index.ts";
import { EXAMPLE_UPLOAD_ID, type CatalogApi, type CatalogUpload } from "../catalog/index.ts";
import { actionRoute, pageRoute, viewerOf, type ConsoleDeps } from "./console-routes.ts";
import { actionDocs, CONSOLE_SESSION, pageDocs, SIGNED_IN } from "./docs.ts";
import { status, table, when } from "./format.ts";
import { html, type SafeHtml } from "./html.ts";
import { actionForm, type Viewer } from "./layout.ts";

const UPLOAD_PARAM = { uploadId: "The upload's id" };
const PROCESSING = new Set(["validating", "validated"]);
const errorTotal = (upload: CatalogUpload) => Object.values(upload.errorCounts).reduce((sum, count) => sum + (count ?? 0), 0);

/** Catalog uploads: the list, a new upload, one upload with its per-line errors, and its progress while it is processed. */
export function catalogRoutes(deps: ConsoleDeps, catalog: CatalogApi): AnyRoute[] {
  const uploadPath = (viewer: Viewer, upload: CatalogUpload) => `${viewer.base}/catalog/uploads/${upload.uploadId}`;
  return [
    pageRoute(deps, {
      path: "/catalog",
      section: "catalog",
      summary: "Show the console's catalog uploads",
      docs: pageDocs({ operationId: "showConsoleCatalog", description: "The company's latest catalog uploads, newest first, with their status, products and errors; an owner starts a new one here." }),
      async render(viewer) {
        const uploads = (await catalog.listUploads(viewer.company.id, { limit: 100 })).reverse();
        const rows = uploads.map(
          (upload) => html`<tr><td><a href="${uploadPath(viewer, upload)}"><code>${upload.uploadId}</code></a></td><td>${when(upload.createdAt)}</td><td>${status(upload.status)}${upload.validateOnly ? html` <span class="muted">(check only)</span>` : ""}</td>
<td class="num">${upload.productsReceived}</td><td class="num">${upload.productsProcessed}</td><td class="num">${errorTotal(upload)}</td></tr>`,
        );
        const newUpload =
          viewer.user.role === "owner"
            ? actionForm(
                viewer,
                "/catalog/uploads",
                html`<p><label><input type="checkbox" name="validateOnly" value="true"> Only check the file (save nothing)</label></p>
<button type="submit">New upload</button>`,
                { class: "card", label: "New upload" },
              )
            : "";
        return {
          title: "Catalog uploads",
          section: "catalog",
          body: html`<h1>Catalog uploads</h1>
${newUpload}
${table("Catalog uploads", ["Upload", "Created", "Status", "Products read", "Products valid", "Errors"], rows, "No uploads yet.")}`,
        };
      },
    }),
    actionRoute(deps, {
      path: "/catalog/uploads",
      section: "catalog",
      role: "owner",
      summary: "Start a catalog upload from the console",
      docs: actionDocs({
        operationId: "createConsoleCatalogUpload",
        description: "Starts a catalog upload, as POST /v1/product-catalog/uploads does, and goes to its page, where the file is sent.",
        after: ["showConsoleCatalog"],
        fields: v.object({ csrf_token: v.string(), validateOnly: v.optional(v.pipe(v.literal("true"), v.description("Only check the file"))) }),
        body: {},
        success: { status: 303, location: `/console/catalog/uploads/${EXAMPLE_UPLOAD_ID}`, description: "The new upload's page" },
      }),
      async run(viewer, form) {
        const upload = await catalog.createUpload(viewer.company.id, { validateOnly: form.validateOnly === "true" });
        return { redirect: uploadPath(viewer, upload) };
      },
    }),
    pageRoute(deps, {
      path: "/catalog/uploads/:uploadId",
      section: "catalog",
      summary: "Show a catalog upload in the console",
      docs: pageDocs({
        operationId: "showConsoleCatalogUpload",
        description: "One upload: its status and counts, how many errors of each type, and the errors with their line numbers (at most ten of each type are kept). While the file is processed, the page follows its progress.",
        params: UPLOAD_PARAM,
        example: { params: { uploadId: EXAMPLE_UPLOAD_ID }, after: ["postUpload", "putUploadFile"] },
      }),
      async render(viewer, context) {
        const upload = await catalog.getUpload(viewer.company.id, context.params.uploadId ?? "");
        if (!upload) throw notFound();
        const target = new URL(upload.uploadUrl);
        return {
          title: `Upload ${upload.uploadId}`,
          section: "catalog",
          scripts: upload.status === "initialized" || PROCESSING.has(upload.status) ? ["console"] : [],
          connectTo: upload.status === "initialized" ? [target.origin] : [],
          body: uploadBody(viewer, upload),
        };
      },
    }),
    defineRoute({
      method: "GET",
      path: "/console/catalog/uploads/:uploadId/progress",
      host: "ui",
      auth: { kind: "none" },
      summary: "Get a catalog upload's progress for the console",
      docs: {
        operationId: "getConsoleCatalogUploadProgress",
        tag: "Console",
        description: "What the upload page reads every second while its file is processed: the status and the counts so far.",
        params: UPLOAD_PARAM,
        responses: {
          200: {
            description: "The upload's progress",
            schema: v.object({ status: v.string(), productsReceived: v.number(), productsProcessed: v.number(), errors: v.number(), lastUpdated: v.string() }),
            example: { status: "validating", productsReceived: 1200, productsProcessed: 1187, errors: 13, lastUpdated: "2026-03-01T12:00:05.000Z" },
          },
          401: { description: "Not signed in to the console" },
          404: { description: "The company has no such upload" },
        },
        security: { schemes: { ConsoleSession: CONSOLE_SESSION } },
        example: { params: { uploadId: EXAMPLE_UPLOAD_ID }, after: [...SIGNED_IN, "postUpload", "putUploadFile"] },
      },
      async handler(context) {
        const viewer = await viewerOf(deps, context);
        if (!viewer) throw unauthorized("sign in to the console first");
        const upload = await catalog.getUpload(viewer.company.id, context.params.uploadId ?? "");
        if (!upload) throw notFound("no such upload");
        const progress = { status: upload.status, productsReceived: upload.productsReceived, productsProcessed: upload.productsProcessed, errors: errorTotal(upload), lastUpdated: upload.lastUpdated };
        return { status: 200, json: progress, headers: { "cache-control": "no-store" } };
      },
    }),
  ];
}

function uploadBody(viewer: Viewer, upload: CatalogUpload): SafeHtml {
  const counts = Object.entries(upload.errorCounts).filter(([, count]) => (count ?? 0) > 0);
  const progressPath = `${viewer.base}/catalog/uploads/${upload.uploadId}/progress`;
  const live = PROCESSING.has(upload.status)
    ? html`<section class="card" data-progress="${progressPath}">
<p><label for="progress">Processing the file</label></p>
<progress id="progress"></progress>
<p role="status" aria-live="polite" data-progress-text>${upload.productsReceived} products read, ${upload.productsProcessed} valid, ${errorTotal(upload)} errors so far.</p>
<p class="muted">This page updates by itself; reload it to see the errors once it ends.</p>
</section>`
    : "";
  const sendFile =
    upload.status === "initialized"
      ? html`<section class="card">
<h2>Send the file</h2>
<form data-upload="${upload.uploadUrl}" data-after="${viewer.base}/catalog/uploads/${upload.uploadId}" class="stack">
<div><label for="file">Catalog file (ndjson, one product a line)</label><input type="file" id="file" name="file" accept=".ndjson,.jsonl,.json,application/x-ndjson" required></div>
<div><button type="submit">Send file</button></div>
<p role="status" aria-live="polite" data-upload-status></p>
</form>
<p class="muted">Or from a terminal, before ${when(upload.expires)}:</p>
<pre><code>curl -X PUT --data-binary @catalog.ndjson '${upload.uploadUrl}'</code></pre>
</section>`
      : "";
  return html`<h1>Upload <code>${upload.uploadId}</code></h1>
<section class="card"><dl class="fields">
<dt>Status</dt><dd>${status(upload.status)}${upload.validateOnly ? " (only checked, nothing saved)" : ""}</dd>
<dt>Created</dt><dd>${when(upload.createdAt)}</dd>
${upload.receivedAt ? html`<dt>File received</dt><dd>${when(upload.receivedAt)} (${upload.fileBytes ?? 0} bytes)</dd>` : ""}
<dt>Products read</dt><dd>${upload.productsReceived}</dd>
<dt>Products valid</dt><dd>${upload.productsProcessed}</dd>
<dt>Last update</dt><dd>${when(upload.lastUpdated)}</dd>
</dl></section>
${sendFile}${live}
<h2>Errors</h2>
${counts.length > 0 ? html`<p>${counts.map(([type, count], index) => html`${index > 0 ? ", " : ""}<strong>${count}</strong> ${type}`)}</p>` : ""}
${table(
  "Errors by line",
  ["Line", "Type", "Message"],
  [...upload.errors].sort((a, b) => a.lineNum - b.lineNum).map((error) => html`<tr><td class="num">${error.lineNum === 0 ? "whole file" : error.lineNum}</td><td>${error.errorType}</td><td class="wrap">${error.errorMessage}</td></tr>`),
  "No errors.",
)}
<p><a href="${viewer.base}/catalog">All uploads</a></p>`;
}
