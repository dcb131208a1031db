import { randomUUID } from "node:crypto";
import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { access, link, mkdir, rename, rm } from "node:fs/promises";
import { once } from "node:events";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { finished } from "node:stream/promises";
import { systemClock, type Clock, type ObjectStorage, type StoredObject } from "../../../src/index.ts";
import { copyLimited, ObjectExistsError, SignedUploads } from "../shared/signed-uploads.ts";

/** Bytes per read and write of a file: fewer event-loop turns for large objects, still bounded memory. */
const STREAM_CHUNK_BYTES = 256 * 1024;

export interface FsObjectStorageOptions {
  /** Where objects are kept. */
  directory: string;
  /** Public base URL of the kit, for pre-signed upload URLs. */
  baseUrl: string;
  /** Signs upload URLs (HMAC-SHA256): the kit secret. */
  secret: string;
  /** Decides when upload URLs expire. Default: the system clock. */
  clock?: Clock;
}

/**
 * Objects as files. Pre-signed uploads arrive on the kit's own route
 * (`PUT /uploads/:key`) and are streamed to disk. Every write goes to a
 * temporary file that is moved into place once complete, so a half-written
 * object is never visible.
 */
export function fsObjectStorage(options: FsObjectStorageOptions): ObjectStorage {
  const pathOf = (key: string) => join(options.directory, encodeURIComponent(key));

  /** Streams `body` into a temporary file and hands it to `commit`; the temporary file never outlives the call. */
  async function writeFile(key: string, body: Readable, maxBytes: number | undefined, commit: (partial: string, path: string) => Promise<void>) {
    await mkdir(options.directory, { recursive: true });
    const path = pathOf(key);
    const partial = `${path}.partial-${randomUUID()}`;
    const out = createWriteStream(partial, { flags: "wx", highWaterMark: STREAM_CHUNK_BYTES });
    // Errors surface through `drain` and `finished` below; this keeps a write that fails after
    // a refusal (the stream is destroyed mid-write) from becoming an uncaught exception.
    out.on("error", () => undefined);
    try {
      const bytes = await copyLimited(body, maxBytes, (chunk) => write(out, chunk));
      out.end();
      await finished(out);
      await commit(partial, path);
      return { key, bytes };
    } finally {
      out.destroy();
      await rm(partial, { force: true });
    }
  }

  const uploads = new SignedUploads(
    { secret: options.secret, baseUrl: options.baseUrl, clock: options.clock ?? systemClock() },
    {
      exists: (key) => exists(pathOf(key)),
      create: (key, body, maxBytes) =>
        writeFile(key, body, maxBytes, async (partial, path) => {
          // A hard link never replaces an existing file, so two uploads racing to one key cannot both win.
          try {
            await link(partial, path);
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code === "EEXIST") throw new ObjectExistsError(key);
            throw error;
          }
        }),
      delete: (key) => rm(pathOf(key), { force: true }),
    },
  );

  return {
    name: "fs",
    createUploadTarget: async (key, target) => uploads.target(key, target),
    put: (key, body, putOptions): Promise<StoredObject> => writeFile(key, body, putOptions?.maxBytes, rename),
    async get(key) {
      const path = pathOf(key);
      if (!(await exists(path))) return undefined;
      return createReadStream(path, { highWaterMark: STREAM_CHUNK_BYTES });
    },
    async delete(key) {
      await rm(pathOf(key), { force: true });
    },
    onUploaded: (listener) => uploads.onUploaded(listener),
    routes: () => uploads.routes(),
  };
}

async function write(out: WriteStream, chunk: Buffer): Promise<void> {
  if (out.errored) throw out.errored;
  if (!out.write(chunk)) await once(out, "drain");
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
