import { Readable } from "node:stream";
import type { ObjectStorage, StoredObject, UploadTarget } from "../../../src/ports/object-storage.ts";

/** Objects in memory, for tests. Upload targets point at `memory://` URLs that tests fulfil with `put`. */
export function memoryObjectStorage(): ObjectStorage {
  const objects = new Map<string, Buffer>();
  return {
    name: "memory",
    async createUploadTarget(key, options): Promise<UploadTarget> {
      return { url: `memory://objects/${encodeURIComponent(key)}`, method: "PUT", expiresAt: options.expiresAt, maxBytes: options.maxBytes };
    },
    async put(key, body, options): Promise<StoredObject> {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of body) {
        const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
        size += buffer.length;
        if (options?.maxBytes !== undefined && size > options.maxBytes) throw new RangeError(`object exceeds ${options.maxBytes} bytes`);
        chunks.push(buffer);
      }
      objects.set(key, Buffer.concat(chunks, size));
      return { key, bytes: size };
    },
    async get(key) {
      const buffer = objects.get(key);
      return buffer ? Readable.from([buffer]) : undefined;
    },
    async delete(key) {
      objects.delete(key);
    },
  };
}
