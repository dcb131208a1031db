import type { Readable } from "node:stream";
import { defineToken } from "../kernel/token.ts";

export interface UploadTargetOptions {
  /** Epoch ms after which the target refuses uploads. */
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

/** The ObjectStorage port: pre-signed uploads, streamed put and get, delete. */
export interface ObjectStorage {
  readonly name: string;
  /** A pre-signed target for one object key. */
  createUploadTarget(key: string, options: UploadTargetOptions): Promise<UploadTarget>;
  /** Streams `body` into the object; never holds it whole in memory. */
  put(key: string, body: Readable, options?: { maxBytes?: number }): Promise<StoredObject>;
  /** A stream of the object, or undefined when there is none. */
  get(key: string): Promise<Readable | undefined>;
  delete(key: string): Promise<void>;
  /** Called after a pre-signed upload completed. The catalog plugin listens to start processing. */
  onUploaded?(handler: (object: StoredObject) => Promise<void>): void;
}

export const OBJECT_STORAGE = defineToken<ObjectStorage>("ObjectStorage", [
  "reachkit/adapters/object-storage/fs (fsObjectStorage)",
  "reachkit/adapters/object-storage/memory (memoryObjectStorage)",
]);
