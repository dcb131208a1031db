import type { Readable } from "node:stream";
import {
  defineRoute,
  HttpError,
  ObjectTooLargeError,
  payloadTooLarge,
  rawBody,
  reply,
  safeEqual,
  sign,
  type AnyRoute,
  type Clock,
  type RequestContext,
  type RouteDocs,
  type StoredObject,
  type UploadListener,
  type UploadTarget,
  type UploadTargetOptions,
} from "../../../src/index.ts";
import * as v from "valibot";

/**
 * Pre-signed uploads served by the kit's own HTTP route, shared by the
 * filesystem and memory adapters: the URL carries its expiry, its size cap and
 * an HMAC of both with the key, so the route needs no state to check it.
 * Internal to the adapters: not exported from their index files.
 */

/** The key already holds an object: a pre-signed target takes one upload. */
export class ObjectExistsError extends Error {
  constructor(key: string) {
    super(`object ${key} already exists`);
    this.name = "ObjectExistsError";
  }
}

/** The uploader's stream failed (the client went away); nothing was kept. */
export class UploadInterruptedError extends Error {
  constructor(cause: unknown) {
    super(`the upload stream failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = "UploadInterruptedError";
  }
}

/** Where an adapter keeps a pre-signed upload: written once, never over an existing object. */
export interface UploadSink {
  exists(key: string): Promise<boolean>;
  /**
   * Streams `body` into a new object. Throws {@link ObjectExistsError} when the
   * key is taken by the time the body is complete, {@link ObjectTooLargeError}
   * above `maxBytes`; either way nothing is kept.
   */
  create(key: string, body: Readable, maxBytes: number): Promise<StoredObject>;
  delete(key: string): Promise<void>;
}

export interface SignedUploadsOptions {
  /** Signs upload URLs (HMAC-SHA256). */
  secret: string;
  /** Public base URL of the kit. */
  baseUrl: string;
  clock: Clock;
}

const ROUTE_PREFIX = "/uploads/";

const UPLOAD_DOCS: RouteDocs = {
  operationId: "putUploadFile",
  tag: "Uploads",
  description: "Receives a file at an upload URL that the kit handed out (a catalog upload's `uploadUrl`): PUT the bytes as the body, before the URL expires, once.",
  params: { key: "The object's key, from the URL" },
  query: v.object({ expires: v.string(), max: v.pipe(v.string(), v.description("The largest file accepted, in bytes")), signature: v.string() }),
  requestBody: { contentType: "application/octet-stream", schema: v.string(), description: "The file (for a catalog: UTF-8 ndjson, one product a line)" },
  responses: {
    200: { description: "Stored; the file's processing starts" },
    403: { description: "The URL is not signed, its signature does not match, or it expired" },
    409: { description: "A file was uploaded to this URL already" },
  },
  // The URL of the catalog upload example (postUpload): the examples tell one story.
  example: {
    params: { key: "catalog/5dee4a05-3194-4aab-a688-5ec87bedad2f/0mm7p6zfs000ac869721894a5.ndjson" },
    query: { expires: "1772370001000", max: "2147483648", signature: "-jgjwSxLJcJWXoHXQjjAZ64qOza4pxbri4GA5-GSeP4" },
    body:
      '{"id":"tee-1","name":"Classic tee","link":"https://shop.example/p/tee-1","lastUpdated":"2026-03-01T12:00:00Z",' +
      '"variants":[{"id":"tee-1-s","name":"Classic tee, small","link":"https://shop.example/p/tee-1","prices":[{"currencyCode":"USD","amount":"19.00"}],' +
      '"availableForPurchase":true,"lastUpdated":"2026-03-01T12:00:00Z"}]}\n',
    after: ["postUpload"],
  },
};
const DIGITS = /^\d{1,16}$/;

export class SignedUploads {
  readonly #listeners = new Set<UploadListener>();

  constructor(
    private readonly options: SignedUploadsOptions,
    private readonly sink: UploadSink,
  ) {}

  target(key: string, { expiresAt, maxBytes }: UploadTargetOptions): UploadTarget {
    if (!Number.isSafeInteger(expiresAt) || !Number.isSafeInteger(maxBytes) || maxBytes < 0) {
      throw new TypeError("expiresAt and maxBytes must be non-negative integers");
    }
    const expires = String(expiresAt);
    const max = String(maxBytes);
    const query = new URLSearchParams({ expires, max, signature: this.#signature(key, expires, max) });
    const base = this.options.baseUrl.replace(/\/+$/, "");
    return { url: `${base}${ROUTE_PREFIX}${encodeURIComponent(key)}?${query}`, method: "PUT", expiresAt, maxBytes };
  }

  onUploaded(listener: UploadListener): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  routes(): AnyRoute[] {
    return [
      defineRoute({
        method: "PUT",
        path: `${ROUTE_PREFIX}:key`,
        auth: { kind: "none" },
        body: rawBody(),
        summary: "Upload a file to a pre-signed URL",
        docs: UPLOAD_DOCS,
        handler: (context) => this.#receive(context),
      }),
    ];
  }

  async #receive(context: RequestContext<Readable, Record<string, string | string[]>>) {
    const key = context.params.key ?? "";
    const { expires, max, signature } = context.query;
    // The body is left unread on every refusal: close the connection rather than drain a large file.
    const refuse = (status: number, code: string, message: string) => new HttpError(status, code, message, [], { connection: "close" });
    if (typeof expires !== "string" || typeof max !== "string" || typeof signature !== "string" || !DIGITS.test(expires) || !DIGITS.test(max)) {
      throw refuse(403, "invalid_signature", "the upload URL is not signed");
    }
    if (!safeEqual(signature, this.#signature(key, expires, max))) {
      throw refuse(403, "invalid_signature", "the upload URL signature does not match");
    }
    const expiresAt = Number(expires);
    if (this.options.clock.now() >= expiresAt) {
      throw refuse(403, "upload_expired", `the upload URL expired at ${new Date(expiresAt).toISOString()}`);
    }
    const maxBytes = Number(max);
    if (Number(context.header("content-length") ?? 0) > maxBytes) throw payloadTooLarge(maxBytes);
    if (await this.sink.exists(key)) throw refuse(409, "already_uploaded", "a file was already uploaded to this URL");

    let object: StoredObject;
    try {
      object = await this.sink.create(key, context.body, maxBytes);
    } catch (error) {
      if (error instanceof ObjectTooLargeError) throw payloadTooLarge(maxBytes);
      if (error instanceof ObjectExistsError) throw refuse(409, "already_uploaded", "a file was already uploaded to this URL");
      if (error instanceof UploadInterruptedError) throw refuse(400, "upload_interrupted", error.message);
      throw error;
    }
    try {
      for (const listener of this.#listeners) await listener(object);
    } catch (error) {
      await this.sink.delete(key);
      throw error;
    }
    return reply.empty(200);
  }

  #signature(key: string, expires: string, max: string): string {
    return sign(this.options.secret, "upload", key, expires, max);
  }
}

/**
 * Reads `body` chunk by chunk into `write`, refusing it as soon as it passes
 * `maxBytes`. The source is not destroyed on a refusal: destroying a request
 * stream would reset the connection before the 413 could be sent.
 */
export async function copyLimited(
  body: Readable,
  maxBytes: number | undefined,
  write: (chunk: Buffer) => void | Promise<void>,
): Promise<number> {
  let bytes = 0;
  const chunks = body.iterator({ destroyOnReturn: false });
  for (;;) {
    let next: IteratorResult<unknown>;
    try {
      next = await chunks.next();
    } catch (error) {
      throw new UploadInterruptedError(error);
    }
    if (next.done) return bytes;
    const chunk = typeof next.value === "string" ? Buffer.from(next.value) : (next.value as Buffer);
    bytes += chunk.length;
    if (maxBytes !== undefined && bytes > maxBytes) {
      body.pause();
      throw new ObjectTooLargeError(maxBytes);
    }
    await write(chunk);
  }
}
