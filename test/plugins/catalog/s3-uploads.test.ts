import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { fakeClock } from "../../../adapters/clock/index.ts";
import { s3ObjectStorage } from "../../../adapters/object-storage/s3/index.ts";
import type { ObjectStorage } from "../../../src/index.ts";
import { putToUrl, startS3Server, type TestS3Server } from "../../support/s3-server.ts";
import { ndjson, product, startCatalogKit, type CatalogTestKit } from "./support.ts";

const POLL_MS = 5_000;

describe("catalog uploads to an S3 bucket", () => {
  let s3: TestS3Server;
  let runs = 0;
  before(async () => {
    s3 = await startS3Server();
  });
  after(() => s3.close());

  /** A catalog kit whose objects live in the test bucket, under a prefix of its own; its clock starts now, as the bucket's does. */
  async function startS3CatalogKit(catalog: { maxFileBytes?: number } = {}): Promise<CatalogTestKit & { bucket: ObjectStorage }> {
    const prefix = `catalog-run-${++runs}/`;
    let bucket!: ObjectStorage;
    const t = await startCatalogKit({
      catalog,
      clock: fakeClock(new Date(Math.floor(Date.now() / 1000) * 1000).toISOString()),
      objectStorage: (clock) => (bucket = s3ObjectStorage({ bucket: s3.bucket, prefix, endpoint: s3.endpoint, credentials: s3.credentials, clock })),
    });
    return Object.assign(t, { bucket });
  }

  const put = (url: string, content: string) => putToUrl({ url, body: Readable.from([Buffer.from(content)]) });

  it("hands out a pre-signed PUT to the bucket, valid until expires, and processes the file a poll finds", async () => {
    const t = await startS3CatalogKit();
    const upload = await t.createUpload();
    const url = new URL(upload.uploadUrl);
    assert.equal(url.origin, s3.endpoint);
    assert.match(url.pathname, new RegExp(`^/${s3.bucket}/catalog-run-\\d+/catalog/${t.company.companyId}/${upload.uploadId}\\.ndjson$`));
    const signedAt = Date.parse(url.searchParams.get("X-Amz-Date")!.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, "$1-$2-$3T$4:$5:$6Z"));
    assert.equal(signedAt + Number(url.searchParams.get("X-Amz-Expires")) * 1000, Date.parse(upload.expires));

    assert.equal(await put(upload.uploadUrl, ndjson(product("p1"), product("p2"))), 200);
    await t.scheduler.flush();
    assert.equal((await t.settle(upload)).status, "initialized", "nothing looked yet");
    await t.scheduler.advance(POLL_MS);
    const settled = await t.settle(upload);
    assert.equal(settled.status, "completed");
    assert.equal(settled.productsProcessed, 2);
    assert.equal((await t.kit.plugin("catalog").getProduct(t.company.companyId, "p2"))?.name, "Product p2");
    assert.equal(await t.bucket.get(`catalog/${t.company.companyId}/${upload.uploadId}.ndjson`), undefined, "the file goes once its upload settles");
    await t.stop();
  });

  it("keeps looking until expires, takes a file that came in the last moments, and expires an upload that got none", async () => {
    const t = await startS3CatalogKit();
    const late = await t.createUpload();
    const never = await t.createUpload();
    // The last poll: the next would come at expires, where the expiry job looks last.
    await t.scheduler.advance(3_600_000 - POLL_MS);
    assert.equal((await t.settle(late)).status, "initialized");
    assert.equal(await put(late.uploadUrl, ndjson(product("late"))), 200);
    await t.scheduler.advance(POLL_MS);
    assert.equal((await t.settle(late)).status, "completed");
    assert.equal((await t.settle(never)).status, "expired");
    await t.stop();
  });

  it("deletes a file above the cap and keeps waiting for a good one", async () => {
    const oneProduct = ndjson(product("a"));
    const t = await startS3CatalogKit({ maxFileBytes: oneProduct.length });
    const upload = await t.createUpload();
    const key = `catalog/${t.company.companyId}/${upload.uploadId}.ndjson`;
    assert.equal(await put(upload.uploadUrl, ndjson(product("a"), product("b"), product("c"))), 200);
    await t.scheduler.advance(POLL_MS);
    assert.equal((await t.settle(upload)).status, "initialized");
    assert.equal(await t.bucket.get(key), undefined);
    assert.equal(await put(upload.uploadUrl, oneProduct), 200);
    await t.scheduler.advance(POLL_MS);
    assert.equal((await t.settle(upload)).status, "completed");
    await t.stop();
  });
});
