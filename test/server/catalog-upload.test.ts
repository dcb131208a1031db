import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { configFromEnv } from "../../server/config.ts";
import { startServer } from "../../server/server.ts";
import { TEST_SECRET, type Json } from "../support/test-kit.ts";
import { startS3Server } from "../support/s3-server.ts";
import { waitUntil } from "../support/wait.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";

const TEE = {
  id: "tee",
  name: "Tee",
  link: "https://shop.example.com/tee",
  lastUpdated: "2026-02-01T10:00:00Z",
  variants: [{ id: "tee-m", name: "Tee M", link: "https://shop.example.com/tee", prices: [{ currencyCode: "USD", amount: "20" }], availableForPurchase: true, lastUpdated: "2026-02-01T10:00:00Z" }],
};

describe("self-hosted server: catalog uploads", () => {
  it("takes a file PUT to the signed uploadUrl on its own route, streams it to the data directory and processes it", async (t) => {
    const dataDir = temporaryDirectory("server-catalog");
    let printed = "";
    const config = configFromEnv({ REACHKIT_SECRET: TEST_SECRET, LOG_LEVEL: "error" }, { port: 0, dataDir });
    const server = await startServer(config, (text) => void (printed += text));
    // Closed even when an assertion fails, or its open sockets and timers would keep the test process alive.
    let closed = false;
    t.after(() => (closed ? undefined : server.close()));
    const apiKey = /apiKey:\s+(\S+)/.exec(printed)![1]!;
    const headers = { authorization: `Bearer ${apiKey}` };

    const created = await fetch(`${server.url}/v1/product-catalog/uploads`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: "{}" });
    assert.equal(created.status, 200);
    const upload = (await created.json()) as Json;
    // The public URL is configured separately (REACHKIT_PUBLIC_URL); the signature covers path and query only.
    const { pathname, search } = new URL(upload.uploadUrl);
    const file = `${JSON.stringify(TEE)}\n`;
    const put = await fetch(`${server.url}${pathname}${search}`, { method: "PUT", body: file });
    assert.equal(put.status, 200);
    assert.equal((await fetch(`${server.url}${pathname}${search}`, { method: "PUT", body: file })).status, 409);

    const catalog = server.kit.plugin("catalog");
    const companyId = (await server.kit.plugin("accounts").listCompanies())[0]!.id;
    // The job runs on the server's own scheduler; it commits "completed", then removes the processed file.
    await waitUntil("the upload completed and its file removed", async () => (await catalog.getUpload(companyId, upload.uploadId))?.status === "completed" && readdirSync(join(dataDir, "objects")).length === 0);
    const done = (await (await fetch(`${server.url}/v1/product-catalog/uploads/${upload.uploadId}`, { headers })).json()) as Json;
    assert.equal(done.status, "completed");
    assert.equal(done.productsProcessed, 1);
    assert.equal((await catalog.getVariant(companyId, "tee-m"))?.productId, "tee");
    closed = true;
    await server.close();
  });
});

describe("self-hosted server: catalog uploads to S3 (REACHKIT_OBJECT_STORAGE)", () => {
  it("hands out a pre-signed PUT to the bucket, notices the file there and processes it", async (t) => {
    const s3 = await startS3Server();
    t.after(() => s3.close());
    let printed = "";
    const config = configFromEnv(
      {
        REACHKIT_SECRET: TEST_SECRET,
        LOG_LEVEL: "error",
        REACHKIT_OBJECT_STORAGE: `s3://${s3.bucket}/reachkit`,
        REACHKIT_S3_ENDPOINT: s3.endpoint,
        AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId,
        AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
      },
      { port: 0, dataDir: temporaryDirectory("server-s3") },
    );
    const server = await startServer(config, (text) => void (printed += text));
    let closed = false;
    t.after(() => (closed ? undefined : server.close()));
    const headers = { authorization: `Bearer ${/apiKey:\s+(\S+)/.exec(printed)![1]!}` };
    const upload = (await (await fetch(`${server.url}/v1/product-catalog/uploads`, { method: "POST", headers, body: "" })).json()) as Json;
    assert.ok(upload.uploadUrl.startsWith(`${s3.endpoint}/${s3.bucket}/reachkit/catalog/`), upload.uploadUrl);
    assert.equal((await fetch(upload.uploadUrl, { method: "PUT", body: `${JSON.stringify(TEE)}\n` })).status, 200);

    const catalog = server.kit.plugin("catalog");
    const companyId = (await server.kit.plugin("accounts").listCompanies())[0]!.id;
    // The server's poll job finds the file within its poll interval (5 s) and processes it from the bucket.
    await waitUntil("the upload completed", async () => (await catalog.getUpload(companyId, upload.uploadId))?.status === "completed", 30_000);
    assert.equal((await catalog.getVariant(companyId, "tee-m"))?.productId, "tee");
    closed = true;
    await server.close();
  });
});
