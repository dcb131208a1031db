import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Readable } from "node:stream";
import { RateLimiter, DEFAULT_RATE_LIMITS } from "../auth/rate-limiter.ts";
import { HttpError } from "../http/errors.ts";
import { HttpCore } from "../http/http-core.ts";
import { silentLogger } from "../logging/json-logger.ts";
import type { Clock } from "../ports/clock.ts";
import { ObjectTooLargeError, type ObjectStorage, type StoredObject } from "../ports/object-storage.ts";

/** A PUT as a client sends it to an upload URL. */
export interface UploadRequest {
  url: string;
  body: Readable;
  headers?: Record<string, string>;
}

export interface ObjectStorageSuiteOptions {
  /**
   * Clients upload straight to the store, which does not tell the kit (S3):
   * the adapter has `checkUpload` and no routes. The suite then calls
   * `checkUpload` after each upload where the kit's own route would have told
   * the listeners, checks that it enforces the cap by deleting, and leaves out
   * the one-upload-per-target rule, which such a store cannot keep (it takes
   * every signed PUT until the URL expires).
   */
  uploadsToStore?: boolean;
}

export interface ObjectStorageHarness {
  storage: ObjectStorage;
  /**
   * Sends a PUT to an upload URL and returns the HTTP status. Optional for
   * adapters with `routes()`: the suite then runs those routes through the
   * kit's HTTP pipeline. Adapters whose URLs point elsewhere (S3) must give it.
   */
  send?(request: UploadRequest): Promise<number>;
}

/**
 * The ObjectStorage port's conformance suite. `makeHarness` gets a clock the
 * suite moves (upload expiry; it starts at the current time, as a store that
 * keeps its own time needs) and must return an empty store every time:
 *
 *     objectStorageConformance("s3", (clock) => ({ storage: s3ObjectStorage({ clock, ... }), send }), { uploadsToStore: true });
 */
export function objectStorageConformance(
  adapterName: string,
  makeHarness: (clock: Clock) => ObjectStorageHarness | Promise<ObjectStorageHarness>,
  options: ObjectStorageSuiteOptions = {},
): void {
  const HOUR = 3_600_000;
  const toStore = options.uploadsToStore ?? false;

  async function setup() {
    let now = Math.floor(Date.now() / 1000) * 1000;
    const clock: Clock = { now: () => now };
    const harness = await makeHarness(clock);
    const { storage } = harness;
    const send = harness.send ?? sendThroughRoutes(storage, clock);
    const uploaded: StoredObject[] = [];
    storage.onUploaded(async (object) => void uploaded.push(object));
    const target = (key: string, maxBytes = 1024) => storage.createUploadTarget(key, { expiresAt: now + HOUR, maxBytes });
    /** Where the kit's route tells the listeners as the upload arrives, a store's adapter tells them when asked. */
    const notice = async (key: string, maxBytes = 1024) => {
      if (!toStore) return;
      assert.ok(storage.checkUpload, `${storage.name} uploads to its store: it needs checkUpload`);
      return storage.checkUpload(key, { maxBytes });
    };
    return { storage, send, uploaded, target, notice, advance: (ms: number) => void (now += ms), now: () => now };
  }

  describe(`ObjectStorage conformance: ${adapterName}`, () => {
    it("streams an object in with put and out with get, and deletes it", async () => {
      const { storage } = await setup();
      const chunks = Array.from({ length: 48 }, (_, i) => Buffer.alloc(64 * 1024, i));
      const stored = await storage.put("files/a b.bin", Readable.from(chunks));
      assert.deepEqual(stored, { key: "files/a b.bin", bytes: 48 * 64 * 1024 });
      assert.deepEqual(await read(await storage.get("files/a b.bin")), Buffer.concat(chunks));
      await storage.delete("files/a b.bin");
      assert.equal(await storage.get("files/a b.bin"), undefined);
      await storage.delete("files/a b.bin");
    });

    it("answers undefined for an unknown key, and put replaces an object", async () => {
      const { storage } = await setup();
      assert.equal(await storage.get("nothing-here"), undefined);
      await storage.put("k", Readable.from([Buffer.from("first")]));
      await storage.put("k", Readable.from([Buffer.from("second")]));
      assert.equal((await read(await storage.get("k")))?.toString(), "second");
    });

    it("refuses a put above maxBytes with ObjectTooLargeError and keeps nothing", async () => {
      const { storage } = await setup();
      await assert.rejects(() => storage.put("big", Readable.from([Buffer.alloc(600), Buffer.alloc(600)]), { maxBytes: 1000 }), ObjectTooLargeError);
      assert.equal(await storage.get("big"), undefined);
      assert.equal((await storage.put("exact", Readable.from([Buffer.alloc(1000)]), { maxBytes: 1000 })).bytes, 1000);
    });

    it("creates a PUT target with its expiry and cap, and stores what is sent to it, telling the listeners", async () => {
      const { storage, send, uploaded, target, notice, now } = await setup();
      const upload = await target("catalog/upload 1.ndjson");
      assert.equal(upload.method, "PUT");
      assert.equal(upload.expiresAt, now() + HOUR);
      assert.equal(upload.maxBytes, 1024);
      assert.ok(URL.canParse(upload.url), upload.url);
      assert.equal(await send({ url: upload.url, body: Readable.from([Buffer.from('{"id":1}\n'), Buffer.from('{"id":2}\n')]) }), 200);
      await notice("catalog/upload 1.ndjson");
      assert.deepEqual(uploaded, [{ key: "catalog/upload 1.ndjson", bytes: 18 }]);
      assert.equal((await read(await storage.get("catalog/upload 1.ndjson")))?.toString(), '{"id":1}\n{"id":2}\n');
    });

    it("refuses an upload whose signature is missing, tampered with or made for another key or cap (403)", async () => {
      const { storage, send, uploaded, target } = await setup();
      const upload = new URL((await target("k1")).url);
      const other = new URL((await target("k2")).url);
      const variants: URL[] = [];
      // The query parameter holding the signature: `signature` (the kit's routes), `X-Amz-Signature` (S3)...
      const signatureParam = [...upload.searchParams.keys()].find((name) => /signature$/i.test(name)) ?? "signature";
      const tampered = new URL(upload);
      const signature = tampered.searchParams.get(signatureParam) ?? "";
      tampered.searchParams.set(signatureParam, `${signature.slice(0, -1)}${signature.endsWith("a") ? "b" : "a"}`);
      variants.push(tampered);
      const unsigned = new URL(upload);
      for (const name of [...unsigned.searchParams.keys()]) unsigned.searchParams.delete(name);
      variants.push(unsigned);
      const swapped = new URL(upload);
      swapped.searchParams.set(signatureParam, other.searchParams.get(signatureParam) ?? "");
      variants.push(swapped);
      const raised = new URL(upload);
      if (raised.searchParams.has("max")) {
        raised.searchParams.set("max", "999999");
        variants.push(raised);
      }
      for (const url of variants) {
        assert.equal(await send({ url: url.toString(), body: Readable.from([Buffer.from("x")]) }), 403, url.toString());
      }
      assert.deepEqual(uploaded, []);
      assert.equal(await storage.get("k1"), undefined);
    });

    it("refuses an upload once the target has expired (403) and keeps nothing", async () => {
      const { storage, send, uploaded, target, advance } = await setup();
      // Made two hours ago, expired an hour ago: by the suite's clock and by a store's own.
      advance(-2 * HOUR);
      const upload = await target("late");
      advance(2 * HOUR);
      assert.equal(await send({ url: upload.url, body: Readable.from([Buffer.from("x")]) }), 403);
      assert.deepEqual(uploaded, []);
      assert.equal(await storage.get("late"), undefined);
    });

    if (!toStore) {
      it("refuses a body above the cap (413), declared or streamed, keeps nothing, and takes a good one after", async () => {
        const { storage, send, uploaded, target } = await setup();
        const upload = await target("capped", 1000);
        const streamed = Readable.from([Buffer.alloc(600), Buffer.alloc(600), Buffer.alloc(600)]);
        assert.equal(await send({ url: upload.url, body: streamed }), 413);
        assert.equal(await storage.get("capped"), undefined);
        const declared = Readable.from([Buffer.alloc(10)]);
        assert.equal(await send({ url: upload.url, body: declared, headers: { "content-length": "1001" } }), 413);
        assert.equal(await storage.get("capped"), undefined);
        assert.deepEqual(uploaded, []);
        assert.equal(await send({ url: upload.url, body: Readable.from([Buffer.alloc(1000)]) }), 200);
        assert.equal((await read(await storage.get("capped")))?.length, 1000);
      });

      it("takes one upload per target: a second PUT is refused (409) and the first object stays", async () => {
        const { storage, send, uploaded, target } = await setup();
        const upload = await target("once");
        assert.equal(await send({ url: upload.url, body: Readable.from([Buffer.from("first")]) }), 200);
        assert.equal(await send({ url: upload.url, body: Readable.from([Buffer.from("second")]) }), 409);
        assert.equal((await read(await storage.get("once")))?.toString(), "first");
        assert.equal(uploaded.length, 1);
      });
    } else {
      it("deletes an uploaded body above the cap when it looks for it, tells nobody, and takes a good one after", async () => {
        const { storage, send, uploaded, target, notice } = await setup();
        const upload = await target("capped", 1000);
        assert.equal(await send({ url: upload.url, body: Readable.from([Buffer.alloc(600), Buffer.alloc(600)]) }), 200);
        assert.equal(await notice("capped", 1000), undefined);
        assert.equal(await storage.get("capped"), undefined);
        assert.deepEqual(uploaded, []);
        assert.equal(await send({ url: upload.url, body: Readable.from([Buffer.alloc(1000)]) }), 200);
        assert.deepEqual(await notice("capped", 1000), { key: "capped", bytes: 1000 });
        assert.deepEqual(uploaded, [{ key: "capped", bytes: 1000 }]);
      });

      it("finds nothing before the upload arrives", async () => {
        const { target, notice, uploaded } = await setup();
        await target("not yet");
        assert.equal(await notice("not yet"), undefined);
        assert.deepEqual(uploaded, []);
      });
    }

    it("lets a listener refuse an upload (the object is deleted, its error answers) and stop listening", async () => {
      const { storage, send, target, notice } = await setup();
      const refusal = new HttpError(403, "upload_closed", "this upload no longer takes files");
      const stop = storage.onUploaded(async () => {
        throw refusal;
      });
      const refused = await target("refused");
      if (toStore) {
        assert.equal(await send({ url: refused.url, body: Readable.from([Buffer.from("x")]) }), 200);
        await assert.rejects(() => notice("refused"), (error) => error === refusal);
      } else {
        assert.equal(await send({ url: refused.url, body: Readable.from([Buffer.from("x")]) }), 403);
      }
      assert.equal(await storage.get("refused"), undefined);
      stop();
      assert.equal(await send({ url: refused.url, body: Readable.from([Buffer.from("x")]) }), 200);
      await notice("refused");
      assert.equal((await read(await storage.get("refused")))?.toString(), "x");
    });
  });
}

/** The adapter's own routes, run through the kit's HTTP pipeline. */
function sendThroughRoutes(storage: ObjectStorage, clock: Clock): (request: UploadRequest) => Promise<number> {
  const routes = storage.routes?.();
  if (!routes || routes.length === 0) {
    throw new Error(`${storage.name} has no routes(): give the harness a send() that uploads to its URLs`);
  }
  const core = new HttpCore({
    routes,
    bodyLimitBytes: 1024 * 1024,
    logger: silentLogger(),
    rateLimiter: new RateLimiter(clock, DEFAULT_RATE_LIMITS),
    authenticate: async () => undefined,
  });
  return async ({ url, body, headers }) => {
    const { pathname, search } = new URL(url);
    const response = await core.handle({ method: "PUT", url: `${pathname}${search}`, headers: { ...headers }, body: { kind: "stream", stream: body } });
    return response.status;
  };
}

async function read(stream: Readable | undefined): Promise<Buffer | undefined> {
  if (!stream) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks);
}
