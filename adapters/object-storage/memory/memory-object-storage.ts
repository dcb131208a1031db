import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { systemClock, type Clock, type ObjectStorage, type StoredObject } from "../../../src/index.ts";
import { copyLimited, ObjectExistsError, SignedUploads } from "../shared/signed-uploads.ts";

export interface MemoryObjectStorageOptions {
  /** Public base URL of the kit, for upload URLs. Default `http://localhost:3000` (the kit's default). */
  baseUrl?: string;
  /** Signs upload URLs. Default: a random secret of this instance. */
  secret?: string;
  /** Decides when upload URLs expire: give tests the kit's fake clock. Default: the system clock. */
  clock?: Clock;
}

/**
 * Objects in memory, for tests. Upload URLs are served by the kit's own route,
 * exactly as the filesystem adapter's are, so a test uploads with
 * `kit.inject({ method: "PUT", url: <path and query of uploadUrl>, body })`.
 */
export function memoryObjectStorage(options: MemoryObjectStorageOptions = {}): ObjectStorage {
  const objects = new Map<string, Buffer>();

  async function collect(body: Readable, maxBytes: number | undefined): Promise<Buffer> {
    const chunks: Buffer[] = [];
    const size = await copyLimited(body, maxBytes, (chunk) => void chunks.push(chunk));
    return Buffer.concat(chunks, size);
  }

  const uploads = new SignedUploads(
    {
      secret: options.secret ?? randomBytes(32).toString("base64url"),
      baseUrl: options.baseUrl ?? "http://localhost:3000",
      clock: options.clock ?? systemClock(),
    },
    {
      exists: async (key) => objects.has(key),
      async create(key, body, maxBytes): Promise<StoredObject> {
        const buffer = await collect(body, maxBytes);
        if (objects.has(key)) throw new ObjectExistsError(key);
        objects.set(key, buffer);
        return { key, bytes: buffer.length };
      },
      delete: async (key) => void objects.delete(key),
    },
  );

  return {
    name: "memory",
    createUploadTarget: async (key, target) => uploads.target(key, target),
    async put(key, body, putOptions): Promise<StoredObject> {
      const buffer = await collect(body, putOptions?.maxBytes);
      objects.set(key, buffer);
      return { key, bytes: buffer.length };
    },
    async get(key) {
      const buffer = objects.get(key);
      return buffer ? Readable.from([buffer]) : undefined;
    },
    async delete(key) {
      objects.delete(key);
    },
    onUploaded: (listener) => uploads.onUploaded(listener),
    routes: () => uploads.routes(),
  };
}
