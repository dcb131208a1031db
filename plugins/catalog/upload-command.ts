import { createReadStream, statSync } from "node:fs";
import { basename } from "node:path";
import { Readable, Transform } from "node:stream";
import { CliUsageError, companyOption, formatFields, requiredOption, type CliCommand, type CliContext } from "../../src/index.ts";
import type { CatalogApi } from "./catalog-api.ts";
import { errorTotal, type CatalogUpload } from "./catalog-uploads.ts";

/** How often the command reads the upload's progress while the server processes it. */
const POLL_MS = 250;
const BAR_WIDTH = 24;

/**
 * `reachkit catalog upload FILE --company ID`: creates an upload as the API
 * does, sends the file to its pre-signed URL (so the running server, at
 * REACHKIT_PUBLIC_URL, receives and processes it like any client's), then shows
 * the processing's progress from the database until the upload ends.
 */
export const catalogUploadCommand: CliCommand = {
  name: "catalog upload",
  summary: "Upload a catalog file (newline-delimited JSON) to the running server and show its progress until it is processed",
  arguments: [{ name: "FILE", description: "The catalog file, one product per line" }],
  options: {
    ...companyOption,
    "validate-only": { type: "boolean", description: "Check every line, save nothing" },
  },
  async run(values, context) {
    const path = requiredOption(values, "file");
    let fileBytes: number;
    try {
      fileBytes = statSync(path).size;
    } catch {
      throw new CliUsageError(`cannot read ${path}`);
    }
    const kit = await context.openKit();
    const catalog = kit.plugin("catalog");
    const companyId = requiredOption(values, "company");
    if (!(await kit.plugin("accounts").getCompany(companyId))) throw new CliUsageError(`no company ${companyId}`);
    const created = await catalog.createUpload(companyId, { validateOnly: values["validate-only"] === true });
    const started = Date.now();
    const lines = await sendFile(path, fileBytes, created.uploadUrl, context);
    const upload = await watchProcessing(catalog, companyId, created, lines, basename(path), context);
    const seconds = Math.round((Date.now() - started) / 100) / 10;
    const summary = {
      uploadId: upload.uploadId,
      status: upload.status,
      linesValidated: upload.productsReceived,
      [upload.validateOnly ? "productsValid" : "productsSaved"]: upload.productsProcessed,
      errors: errorTotal(upload.errorCounts),
      seconds,
    };
    const errorLines = upload.errors.map((error) => `  line ${error.lineNum}  ${error.errorType}  ${error.errorMessage}`).join("\n");
    return {
      json: { ...upload, seconds },
      text: `${formatFields(summary)}${errorLines ? `\nerrors:\n${errorLines}` : ""}`,
      exitCode: upload.status === "failed" || upload.status === "expired" ? 1 : 0,
    };
  },
};

/** PUTs the file to its pre-signed URL, showing the bytes sent; returns the number of lines it holds. */
async function sendFile(path: string, fileBytes: number, uploadUrl: string, context: CliContext): Promise<number> {
  let sent = 0;
  let lines = 0;
  let lastByte = 0x0a;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      sent += chunk.length;
      for (let at = chunk.indexOf(0x0a); at !== -1; at = chunk.indexOf(0x0a, at + 1)) lines++;
      lastByte = chunk[chunk.length - 1] ?? lastByte;
      context.progress(`uploading  ${bar(sent / fileBytes)}  ${megabytes(sent)} of ${megabytes(fileBytes)}`);
      done(null, chunk);
    },
  });
  let response: Response;
  try {
    response = await fetch(uploadUrl, {
      method: "PUT",
      headers: { "content-type": "application/x-ndjson", "content-length": String(fileBytes) },
      body: Readable.toWeb(createReadStream(path).pipe(counter)) as ReadableStream<Uint8Array>,
      duplex: "half",
    } as RequestInit);
  } catch (error) {
    const reason = ((error as Error).cause as Error | undefined)?.message ?? (error as Error).message;
    throw new Error(`no reachkit server answered at ${new URL(uploadUrl).origin} (${reason}); start it, or set REACHKIT_PUBLIC_URL (or PORT) to where it listens`);
  }
  if (response.status !== 200) {
    const body = (await response.json().catch(() => undefined)) as { error?: { message?: string } } | undefined;
    throw new Error(`the server refused the file: ${response.status} ${body?.error?.message ?? response.statusText}`);
  }
  return lastByte === 0x0a ? lines : lines + 1;
}

/** Reads the upload until it ends (completed, validated when only validating, failed, expired), drawing its progress. */
async function watchProcessing(catalog: CatalogApi, companyId: string, created: CatalogUpload, lines: number, name: string, context: CliContext): Promise<CatalogUpload> {
  const finalStatus = created.validateOnly ? "validated" : "completed";
  for (;;) {
    const upload = (await catalog.getUpload(companyId, created.uploadId)) ?? created;
    const ended = upload.status === finalStatus || upload.status === "failed" || upload.status === "expired";
    const share = ended ? 1 : Math.min(0.99, upload.productsReceived / Math.max(1, lines));
    context.progress(`${name}  ${bar(share)}  ${upload.status}  lines ${count(upload.productsReceived)} of ${count(lines)}  ${upload.validateOnly ? "valid" : "saved"} ${count(upload.productsProcessed)}  errors ${count(errorTotal(upload.errorCounts))}`);
    if (ended) return upload;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function bar(share: number): string {
  const filled = Math.round(Math.min(1, share) * BAR_WIDTH);
  return `[${"#".repeat(filled)}${"-".repeat(BAR_WIDTH - filled)}] ${String(Math.floor(Math.min(1, share) * 100)).padStart(3)}%`;
}

const count = (value: number) => value.toLocaleString("en-US");
const megabytes = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`;
