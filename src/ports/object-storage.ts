import type { Readable } from "node:stream";
import type { AnyRoute } from "../http/route.ts";
import { defineToken } from "../kernel/token.ts";

export interface UploadTargetOptions {
  /** Epoch ms from which the target refuses uploads. */
  expiresAt: number;
  /** The largest body accepted, in bytes. */
  maxBytes: number;
}

/** Where a client sends a file directly: an HTTP PUT of the raw bytes to `url`. */
export interface UploadTarget {
  url: string;
  method: "PUT";
  expiresAt: number;
  maxBytes: number;
}

export interface StoredObject {
  key: string;
  bytes: number;
}

/**
 * Hears of each completed pre-signed upload before the uploader gets its
 * answer. Throwing refuses the upload: the object is deleted and the error
 * answers the PUT (an `HttpError` keeps its status).
 */
export type UploadListener = (object: StoredObject) => Promise<void>;

/**
 * The ObjectStorage port: pre-signed uploads, streamed put and get, delete.
 * Bodies are streamed both ways; an adapter never holds an object whole in memory
 * (the memory adapter, for tests, excepted).
 */
export interface ObjectStorage {
  readonly name: string;
  /**
   * A pre-signed target for one object key. An upload to it is refused once
   * `expiresAt` has come, above `maxBytes` (413, nothing kept), with a wrong
   * signature (403), and when the key already holds an object (409): a target
   * is good for one upload.
   */
  createUploadTarget(key: string, options: UploadTargetOptions): Promise<UploadTarget>;
  /** Streams `body` into the object, replacing any previous one; throws {@link ObjectTooLargeError} above `maxBytes` (nothing kept). */
  put(key: string, body: Readable, options?: { maxBytes?: number }): Promise<StoredObject>;
  /** A stream of the object, or undefined when there is none. */
  get(key: string): Promise<Readable | undefined>;
  /** Removes the object; no error when there is none. */
  delete(key: string): Promise<void>;
  /** Listens to completed pre-signed uploads; returns the function that stops listening. */
  onUploaded(listener: UploadListener): () => void;
  /**
   * The routes that receive pre-signed uploads, for adapters whose upload URLs
   * point at the kit's own HTTP server (filesystem, memory). The kit adds them
   * to its route table. Adapters whose clients upload straight to an external
   * store (S3) have none, and have `checkUpload` instead.
   */
  routes?(): readonly AnyRoute[];
  /**
   * For adapters whose clients upload straight to the store (S3), which does
   * not tell the kit: looks for the object of a pre-signed upload. When it has
   * arrived within `maxBytes`, the listeners are told as the routes of other
   * adapters tell them (one that throws refuses it: the object is deleted and
   * the error thrown) and the object is returned. An object above the cap is
   * deleted and, as when nothing has arrived, undefined is returned. Whoever
   * made the target calls it until the target expires (the catalog: from a
   * durable job).
   */
  checkUpload?(key: string, options: { maxBytes: number }): Promise<StoredObject | undefined>;
}

/** A body passed the size cap; nothing of it was kept. */
export class ObjectTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`object exceeds ${maxBytes} bytes`);
    this.name = "ObjectTooLargeError";
  }
}

export const OBJECT_STORAGE = defineToken<ObjectStorage>("ObjectStorage", [
  "reachkit/adapters/object-storage/fs (fsObjectStorage)",
  "reachkit/adapters/object-storage/memory (memoryObjectStorage)",
  "reachkit/adapters/object-storage/s3 (s3ObjectStorage)",
]);
