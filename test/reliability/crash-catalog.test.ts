import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { it } from "node:test";
import { writeCatalogFile } from "../../bench/catalog-file.ts";
import { openServerKit } from "../support/cli.ts";
import { waitUntil } from "../support/wait.ts";
import { CrashableServer } from "./support.ts";

const PRODUCTS = 20_000;

/** What the catalog holds of the upload's first and last products, read from the data directory with the server down. */
async function catalogHolds(dataDir: string): Promise<{ first: boolean; last: boolean }> {
  const kit = await openServerKit(dataDir);
  try {
    const catalog = kit.plugin("catalog");
    const companyId = (await kit.plugin("accounts").listCompanies())[0]!.id;
    const first = (await catalog.getProduct(companyId, "prod-0")) !== undefined;
    const last = (await catalog.getProduct(companyId, `prod-${PRODUCTS - 1}`)) !== undefined;
    return { first, last };
  } finally {
    await kit.stop();
  }
}

it("kill -9 during catalog processing: the upload completes after the restart, and the catalog never holds half of it", { timeout: 60_000 }, async () => {
  const server = new CrashableServer();
  try {
    await server.start();
    const file = join(server.dataDir, "catalog.jsonl");
    await writeCatalogFile(file, PRODUCTS);
    const created = await server.request("POST", "/v1/product-catalog/uploads", {});
    assert.equal(created.status, 200);
    const { uploadId, uploadUrl } = created.json;
    const { pathname, search } = new URL(uploadUrl);
    const put = await fetch(`${server.url}${pathname}${search}`, { method: "PUT", body: readFileSync(file) });
    assert.equal(put.status, 200);

    const progress = async () => (await server.request("GET", `/v1/product-catalog/uploads/${uploadId}`)).json;
    // Killed with several batches written, far from the end.
    await waitUntil("processing under way", async () => (await progress()).productsProcessed >= 1_000, 30_000);
    await server.crash();

    const uploadAfterCrash = await (async () => {
      const kit = await openServerKit(server.dataDir);
      try {
        const companyId = (await kit.plugin("accounts").listCompanies())[0]!.id;
        return (await kit.plugin("catalog").getUpload(companyId, uploadId))!;
      } finally {
        await kit.stop();
      }
    })();
    assert.ok(uploadAfterCrash.productsProcessed < PRODUCTS, `killed mid-way (${uploadAfterCrash.productsProcessed} of ${PRODUCTS} processed)`);
    assert.notEqual(uploadAfterCrash.status, "completed");
    assert.deepEqual(await catalogHolds(server.dataDir), { first: false, last: false }, "nothing of the upload is in the catalog while it is unfinished");

    await server.start();
    await waitUntil("the upload settled", async () => ["completed", "failed"].includes((await progress()).status), 45_000);
    const settled = await progress();
    assert.equal(settled.status, "completed", JSON.stringify(settled.errors));
    assert.equal(settled.productsReceived, PRODUCTS);
    assert.equal(settled.productsProcessed, PRODUCTS);
    await server.stop();
    assert.deepEqual(await catalogHolds(server.dataDir), { first: true, last: true }, "the whole upload is in the catalog");
  } finally {
    await server.dispose();
  }
});
