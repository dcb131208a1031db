import * as v from "valibot";
import type { RouteDocs } from "../../src/index.ts";
import { CATALOG_ERROR_TYPES } from "./line-check.ts";

const TAG = "Product catalog";
/** The upload of the examples (the story's postUpload answers the real one). */
export const EXAMPLE_UPLOAD_ID = "0mm7p6zfs000ac869721894a5";
const UPLOAD_ID = EXAMPLE_UPLOAD_ID;
/** The pre-signed URL of the example upload; the file upload's example sends to it. */
export const EXAMPLE_UPLOAD_KEY = `catalog/5dee4a05-3194-4aab-a688-5ec87bedad2f/${UPLOAD_ID}.ndjson`;
export const EXAMPLE_UPLOAD_QUERY = { expires: "1772370001000", max: "2147483648", signature: "-jgjwSxLJcJWXoHXQjjAZ64qOza4pxbri4GA5-GSeP4" };
const UPLOAD_URL = `http://localhost:3000/uploads/${encodeURIComponent(EXAMPLE_UPLOAD_KEY)}?${new URLSearchParams(EXAMPLE_UPLOAD_QUERY)}`;

const upload = v.object({
  uploadId: v.string(),
  status: v.pipe(
    v.picklist(["initialized", "validating", "validated", "completed", "failed", "expired"]),
    v.description("initialized (no file yet) → validating → validated → completed; failed when saving failed, expired when no file came in time"),
  ),
  errors: v.pipe(
    v.array(v.object({ errorType: v.picklist(CATALOG_ERROR_TYPES), errorMessage: v.string(), lineNum: v.pipe(v.number(), v.description("1-based; 0 for the whole upload")) })),
    v.description("Validation errors, at most 10 per errorType; [] when clean"),
  ),
  productsReceived: v.number(),
  productsProcessed: v.number(),
  lastUpdated: v.pipe(v.string(), v.description("ISO 8601")),
  expires: v.pipe(v.string(), v.description("ISO 8601: the file must be sent before this")),
  uploadUrl: v.pipe(v.string(), v.description("Send the file here: PUT, the ndjson bytes as the body")),
  validateOnly: v.boolean(),
});
const created = {
  uploadId: UPLOAD_ID,
  status: "initialized",
  errors: [],
  productsReceived: 0,
  productsProcessed: 0,
  lastUpdated: "2026-03-01T12:00:01.000Z",
  expires: "2026-03-01T13:00:01.000Z",
  uploadUrl: UPLOAD_URL,
  validateOnly: false,
};
const afterFile = { ...created, status: "completed", productsReceived: 1, productsProcessed: 1 };

export const createUploadDocs: RouteDocs = {
  operationId: "postUpload",
  tag: TAG,
  description:
    "Starts a catalog upload: PUT the newline-delimited JSON file to the answered `uploadUrl` before `expires` (an hour), then follow its status. " +
    "With `validateOnly` the file is checked and nothing is saved (the upload ends at validated).",
  responses: { 200: { description: "The upload, waiting for its file", schema: upload, example: created } },
  example: { body: { validateOnly: false } },
};

export const listUploadsDocs: RouteDocs = {
  operationId: "getUploads",
  tag: TAG,
  description: "The company's recent catalog uploads, in creation order: a bare JSON array.",
  responses: { 200: { description: "The uploads", schema: v.array(upload), example: [afterFile] } },
  example: { after: ["postUpload", "putUploadFile"] },
};

export const getUploadDocs: RouteDocs = {
  operationId: "lookupUpload",
  tag: TAG,
  description: "One catalog upload: its status, counters and errors.",
  params: { uploadId: "The uploadId the create answered" },
  responses: { 200: { description: "The upload", schema: upload, example: afterFile }, 404: { description: "No catalog upload of the company has this id" } },
  example: { params: { uploadId: UPLOAD_ID }, after: ["postUpload", "putUploadFile"] },
};
