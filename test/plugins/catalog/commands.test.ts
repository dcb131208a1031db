import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { createServerKit } from "../../../server/server-kit.ts";
import { silentLogger } from "../../../src/index.ts";
import { cli, newDataDir } from "../../support/cli.ts";
import { TEST_SECRET, type Json } from "../../support/test-kit.ts";
import { waitUntil } from "../../support/wait.ts";
import { ndjson, pathOf, product } from "./support.ts";

/** A company of a new data directory sends `body` as a catalog file; its upload is processed to its end by the self-hosted kit. */
async function uploadOnce(dataDir: string, body: string): Promise<{ companyId: string; uploadId: string }> {
  // The kit with its job runner (the CLI's kits have none).
  const kit = createServerKit({ dataDir, publicUrl: "http://localhost:3000", secret: TEST_SECRET, logger: silentLogger() });
  await kit.start();
  try {
    const companyId = (await kit.provisionCompany({ name: "Acme" })).company.id;
    const catalog = kit.plugin("catalog");
    const { uploadId, uploadUrl } = await catalog.createUpload(companyId);
    assert.equal((await kit.inject({ method: "PUT", url: pathOf(uploadUrl), body })).status, 200);
    await waitUntil("the upload ended", async () => (await catalog.getUpload(companyId, uploadId))?.status !== "validating");
    return { companyId, uploadId };
  } finally {
    await kit.stop();
  }
}

describe("catalog CLI commands", () => {
  const dataDir = newDataDir();
  let companyId = "";
  let uploadId = "";

  before(async () => ({ companyId, uploadId } = await uploadOnce(dataDir, ndjson(product("tee"), "{broken"))));

  it("lists a company's uploads, as a table or as JSON", async () => {
    const table = await cli(dataDir, "catalog", "uploads", "list", "--company", companyId);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, new RegExp(`${uploadId}\\s+completed\\s+false\\s+2\\s+1\\s+1`));
    const uploads = (await cli(dataDir, "catalog", "uploads", "list", "--company", companyId, "--json")).json as Json[];
    assert.deepEqual(
      uploads.map((upload) => [upload.uploadId, upload.status, upload.errorCounts]),
      [[uploadId, "completed", { INVALID_JSON: 1 }]],
    );
  });

  it("shows one upload with its errors", async () => {
    const shown = await cli(dataDir, "catalog", "uploads", "show", "--company", companyId, "--id", uploadId);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /status:\s+completed/);
    assert.match(shown.stdout, /line 2 {2}INVALID_JSON {2}the line is not valid JSON/);
    const missing = await cli(dataDir, "catalog", "uploads", "show", "--company", companyId, "--id", "nope");
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /no catalog upload nope/);
  });

  it("shows a product of the catalog as JSON", async () => {
    const shown = await cli(dataDir, "catalog", "products", "show", "--company", companyId, "--id", "tee");
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(shown.json.variants[0].id, "tee-v1");
    const other = await cli(dataDir, "catalog", "products", "show", "--company", "someone-else", "--id", "tee");
    assert.equal(other.code, 2);
  });
});

describe("catalog CLI commands on a file that holds no product", () => {
  const dataDir = newDataDir();
  let companyId = "";
  let uploadId = "";

  before(async () => ({ companyId, uploadId } = await uploadOnce(dataDir, `${"\n".repeat(100_000)}${ndjson(product("tee"))}`)));

  it("lists the upload as failed and shows why it stopped", async () => {
    const table = await cli(dataDir, "catalog", "uploads", "list", "--company", companyId);
    assert.match(table.stdout, new RegExp(`${uploadId}\\s+failed\\s+false\\s+0\\s+0\\s+1`));
    const shown = await cli(dataDir, "catalog", "uploads", "show", "--company", companyId, "--id", uploadId);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /status:\s+failed/);
    assert.match(shown.stdout, /line 100000 {2}NO_PRODUCTS {2}the first 100000 lines hold no product \(each one is blank or has errors\): reading stopped at line 100000/);
  });
});
