import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { Transform, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { sign } from "../../../src/auth/secrets.ts";
import type { ObjectStorage, StoredObject, UploadTarget } from "../../../src/ports/object-storage.ts";

export interface FsObjectStorageOptions {
  /** Where objects are kept. */
  directory: string;
  /** Public base URL of the kit, for pre-signed upload URLs. */
  baseUrl: string;
  /** Signs upload URLs (HMAC-SHA256): the kit secret. */
  secret: string;
}

/** Objects as files; writes go to a temporary file renamed into place, so a half-written object is never visible. */
export function fsObjectStorage(options: FsObjectStorageOptions): ObjectStorage {
  const pathOf = (key: string) => join(options.directory, encodeURIComponent(key));
  return {
    name: "fs",
    async createUploadTarget(key, target): Promise<UploadTarget> {
      const expires = String(target.expiresAt);
      const max = String(target.maxBytes);
      const signature = sign(options.secret, "upload", key, expires, max);
      const query = new URLSearchParams({ expires, max, signature });
      return {
        url: `${options.baseUrl.replace(/\/+$/, "")}/uploads/${encodeURIComponent(key)}?${query}`,
        method: "PUT",
        expiresAt: target.expiresAt,
        maxBytes: target.maxBytes,
      };
    },
    async put(key, body, putOptions): Promise<StoredObject> {
      await mkdir(options.directory, { recursive: true });
      const path = pathOf(key);
      const partial = `${path}.partial-${process.pid}-${Date.now()}`;
      let bytes = 0;
      const limit = putOptions?.maxBytes;
      const counter = new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          bytes += chunk.length;
          if (limit !== undefined && bytes > limit) callback(new RangeError(`object exceeds ${limit} bytes`));
          else callback(null, chunk);
        },
      });
      try {
        await pipeline(body, counter, createWriteStream(partial));
        await rename(partial, path);
      } catch (error) {
        await rm(partial, { force: true });
        throw error;
      }
      return { key, bytes };
    },
    async get(key): Promise<Readable | undefined> {
      const path = pathOf(key);
      try {
        await stat(path);
      } catch {
        return undefined;
      }
      return createReadStream(path);
    },
    async delete(key) {
      await rm(pathOf(key), { force: true });
    },
  };
}
