import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { configFromEnv } from "../../server/config.ts";
import { startServer } from "../../server/server.ts";
import { TEST_SECRET, type Json } from "../support/test-kit.ts";
import { waitUntil } from "../support/wait.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";

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
    const file = `${JSON.stringify({
      id: "tee",
      name: "Tee",
      link: "https://shop.example.com/tee",
      lastUpdated: "2026-02-01T10:00:00Z",
      variants: [{ id: "tee-m", name: "Tee M", link: "https://shop.example.com/tee", prices: [{ currencyCode: "USD", amount: "20" }], availableForPurchase: true, lastUpdated: "2026-02-01T10:00:00Z" }],
    })}\n`;
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
