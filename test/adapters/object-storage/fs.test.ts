import assert from "node:assert/strict";
import { request } from "node:http";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fakeClock } from "../../../adapters/clock/index.ts";
import { nodeHttpServer } from "../../../adapters/http/node/index.ts";
import { fsObjectStorage } from "../../../adapters/object-storage/fs/index.ts";
import { manualScheduler } from "../../../adapters/scheduler/manual/index.ts";
import { memoryStorage } from "../../../adapters/storage/memory/index.ts";
import { createReachkit, silentLogger } from "../../../src/index.ts";
import { TEST_SECRET } from "../../support/test-kit.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";

const MiB = 1024 * 1024;

async function serve() {
  const clock = fakeClock("2026-03-01T12:00:00.000Z");
  const directory = temporaryDirectory("fs-objects");
  const objectStorage = fsObjectStorage({ directory, baseUrl: "http://placeholder", secret: TEST_SECRET, clock });
  const kit = createReachkit({ storage: memoryStorage(), scheduler: manualScheduler(clock), clock, objectStorage, logger: silentLogger(), secret: TEST_SECRET });
  await kit.start();
  const server = nodeHttpServer(kit);
  const { port } = await server.listen(0, "127.0.0.1");
  const target = async (key: string, maxBytes: number) => {
    const url = new URL((await objectStorage.createUploadTarget(key, { expiresAt: clock.now() + 60_000, maxBytes })).url);
    return `http://127.0.0.1:${port}${url.pathname}${url.search}`;
  };
  const bytesOnDisk = () => readdirSync(directory).reduce((sum, name) => sum + statSync(join(directory, name)).size, 0);
  return { objectStorage, directory, target, bytesOnDisk, close: () => server.close() };
}

/** A PUT over a real socket; resolves with the status the client receives. */
function put(url: string, chunks: AsyncIterable<Buffer>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "PUT", headers: { "transfer-encoding": "chunked" } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    (async () => {
      for await (const chunk of chunks) if (!req.write(chunk)) await new Promise((r) => req.once("drain", r));
      req.end();
    })().catch(() => undefined);
  });
}

describe("fs object storage", () => {
  it("writes an upload to disk while it is still arriving, never holding it whole", async () => {
    const { target, bytesOnDisk, objectStorage, close } = await serve();
    const url = await target("big.ndjson", 64 * MiB);
    let onDiskBeforeLastChunk = 0;
    async function* body() {
      for (let i = 0; i < 32; i++) {
        if (i === 31) onDiskBeforeLastChunk = bytesOnDisk();
        yield Buffer.alloc(MiB, 97);
      }
    }
    assert.equal(await put(url, body()), 200);
    assert.ok(onDiskBeforeLastChunk >= 16 * MiB, `only ${onDiskBeforeLastChunk} bytes were on disk before the last chunk was sent`);
    let size = 0;
    for await (const chunk of (await objectStorage.get("big.ndjson"))!) size += (chunk as Buffer).length;
    assert.equal(size, 32 * MiB);
    await close();
  });

  it("answers 413 over a real socket when the body passes the cap, and keeps nothing on disk", async () => {
    const { target, directory, close } = await serve();
    const url = await target("too-big.ndjson", 2 * MiB);
    async function* body() {
      for (let i = 0; i < 8; i++) yield Buffer.alloc(MiB, 98);
    }
    assert.equal(await put(url, body()), 413);
    assert.deepEqual(readdirSync(directory), []);
    await close();
  });
});
