import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Json } from "../../support/test-kit.ts";
import { ndjson, pathOf, product, startCatalogKit } from "./support.ts";

const HOUR = 3_600_000;
const UPLOAD_FIELDS = ["errors", "expires", "lastUpdated", "productsProcessed", "productsReceived", "status", "uploadId", "uploadUrl", "validateOnly"];

describe("catalog uploads over HTTP", () => {
  it("creates an upload (200) with the whole upload object: initialized, a signed uploadUrl, expires in one hour", async () => {
    const t = await startCatalogKit();
    const response = await t.request({ method: "POST", url: "/v1/product-catalog/uploads" });
    assert.equal(response.status, 200);
    assert.equal(response.headers["content-type"], "application/json");
    const upload = t.json(response);
    assert.deepEqual(Object.keys(upload).sort(), UPLOAD_FIELDS);
    assert.equal(upload.status, "initialized");
    assert.equal(upload.validateOnly, false);
    assert.deepEqual(upload.errors, []);
    assert.equal(upload.productsReceived, 0);
    assert.equal(upload.productsProcessed, 0);
    assert.equal(upload.lastUpdated, "2026-03-01T12:00:00.000Z");
    assert.equal(upload.expires, "2026-03-01T13:00:00.000Z");
    const url = new URL(upload.uploadUrl);
    assert.equal(url.origin, "http://localhost:3000");
    assert.match(url.pathname, /^\/uploads\//);
    assert.ok(url.searchParams.get("signature"));
    assert.equal(typeof upload.uploadId, "string");
    await t.stop();
  });

  it("takes validateOnly from an optional body, ignores unknown fields, and names a wrong type (400)", async () => {
    const t = await startCatalogKit();
    assert.equal((await t.createUpload({})).validateOnly, false);
    assert.equal((await t.createUpload({ validateOnly: true, source: "script" })).validateOnly, true);
    const wrongType = await t.request({ method: "POST", url: "/v1/product-catalog/uploads", body: { validateOnly: "yes" } });
    assert.equal(wrongType.status, 400);
    assert.equal(t.json(wrongType).error.details[0].path, "validateOnly");
    const array = await t.request({ method: "POST", url: "/v1/product-catalog/uploads", body: [] });
    assert.equal(array.status, 400);
    const notJson = await t.request({ method: "POST", url: "/v1/product-catalog/uploads", body: "{", headers: { "content-type": "application/json" } });
    assert.equal(notJson.status, 400);
    const form = await t.request({ method: "POST", url: "/v1/product-catalog/uploads", body: "a=b", headers: { "content-type": "application/x-www-form-urlencoded" } });
    assert.equal(form.status, 415);
    await t.stop();
  });

  it("limits upload creation to one per second per token (429 with Retry-After)", async () => {
    const t = await startCatalogKit({ config: {} });
    assert.equal((await t.request({ method: "POST", url: "/v1/product-catalog/uploads" })).status, 200);
    const limited = await t.request({ method: "POST", url: "/v1/product-catalog/uploads" });
    assert.equal(limited.status, 429);
    assert.equal(limited.headers["retry-after"], "1");
    assert.equal(limited.headers["x-ratelimit-limit"], "1");
    t.clock.advance(1_000);
    assert.equal((await t.request({ method: "POST", url: "/v1/product-catalog/uploads" })).status, 200);
    await t.stop();
  });

  it("needs product_catalogs:write to create and product_catalogs:read to list and fetch", async () => {
    const t = await startCatalogKit();
    const accounts = t.kit.plugin("accounts");
    const keyWith = async (scopes: Json[]) => {
      const application = await accounts.createApplication({ companyId: t.company.companyId, name: scopes.join(" "), scopes });
      return (await accounts.issueCredential({ companyId: t.company.companyId, kind: "api_key", applicationId: application.id })).token;
    };
    const readOnly = await keyWith(["product_catalogs:read"]);
    const writeOnly = await keyWith(["product_catalogs:write"]);
    assert.equal((await t.request({ method: "POST", url: "/v1/product-catalog/uploads", token: readOnly })).status, 403);
    const created = await t.request({ method: "POST", url: "/v1/product-catalog/uploads", token: writeOnly });
    assert.equal(created.status, 200);
    const id = t.json(created).uploadId;
    assert.equal((await t.request({ url: "/v1/product-catalog/uploads", token: writeOnly })).status, 403);
    assert.equal((await t.request({ url: `/v1/product-catalog/uploads/${id}`, token: writeOnly })).status, 403);
    assert.equal((await t.request({ url: `/v1/product-catalog/uploads/${id}`, token: readOnly })).status, 200);
    assert.equal((await t.request({ url: "/v1/product-catalog/uploads", token: t.company.legacyToken })).status, 401);
    assert.equal((await t.request({ url: "/v1/product-catalog/uploads", token: null })).status, 401);
    await t.stop();
  });

  it("lists the company's uploads in creation order and hides other companies' (404)", async () => {
    const t = await startCatalogKit();
    const first = await t.createUpload();
    t.clock.advance(10);
    const second = await t.createUpload({ validateOnly: true });
    const other = (await t.kit.provisionCompany({ name: "Other" })).output;
    const theirs = t.json(await t.request({ method: "POST", url: "/v1/product-catalog/uploads", token: other.apiKey as string }));

    const listed = t.json(await t.request({ url: "/v1/product-catalog/uploads" }));
    assert.deepEqual(
      listed.map((upload: Json) => upload.uploadId),
      [first.uploadId, second.uploadId],
    );
    assert.deepEqual(Object.keys(listed[1]).sort(), UPLOAD_FIELDS);
    assert.deepEqual(t.json(await t.request({ url: `/v1/product-catalog/uploads/${second.uploadId}` })), second);
    const foreign = await t.request({ url: `/v1/product-catalog/uploads/${theirs.uploadId}` });
    assert.equal(foreign.status, 404);
    assert.equal(t.json(foreign).error.code, "not_found");
    assert.equal((await t.request({ url: "/v1/product-catalog/uploads/nope" })).status, 404);
    await t.stop();
  });

  it("lists the most recent uploads only (listLimit), still oldest first", async () => {
    const t = await startCatalogKit({ catalog: { listLimit: 2 } });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await t.createUpload()).uploadId);
    const listed = t.json(await t.request({ url: "/v1/product-catalog/uploads" }));
    assert.deepEqual(
      listed.map((upload: Json) => upload.uploadId),
      ids.slice(1),
    );
    await t.stop();
  });

  it("takes the file with a PUT to uploadUrl (200, no token), then processes it as a durable job: validating, then completed", async () => {
    const t = await startCatalogKit();
    const upload = await t.createUpload();
    assert.equal(await t.sendFile(upload, ndjson(product("p1"), product("p2"))), 200);
    const received = t.json(await t.request({ url: `/v1/product-catalog/uploads/${upload.uploadId}` }));
    assert.equal(received.status, "validating");
    assert.deepEqual((await t.kit.jobs.list({ status: "queued", type: "catalog.upload.process" })).length, 1);
    const done = await t.settle(upload);
    assert.equal(done.status, "completed");
    assert.deepEqual(done.errors, []);
    assert.equal(done.productsReceived, 2);
    assert.equal(done.productsProcessed, 2);
    assert.equal((await t.kit.plugin("catalog").getProduct(t.company.companyId, "p2"))?.name, "Product p2");
    await t.stop();
  });

  it("stops at validated with validateOnly and saves nothing", async () => {
    const t = await startCatalogKit();
    const done = await t.upload(ndjson(product("p1"), "{oops"), { validateOnly: true });
    assert.equal(done.status, "validated");
    assert.equal(done.productsReceived, 2);
    assert.equal(done.productsProcessed, 1);
    assert.equal(done.errors.length, 1);
    const catalog = t.kit.plugin("catalog");
    assert.equal(await catalog.getProduct(t.company.companyId, "p1"), undefined);
    assert.equal(await catalog.getVariant(t.company.companyId, "p1-v1"), undefined);
    const saved = await t.upload(ndjson(product("p1")));
    assert.equal(saved.status, "completed");
    assert.equal((await catalog.getProduct(t.company.companyId, "p1"))?.id, "p1");
    await t.stop();
  });

  it("expires an upload whose file never came: status expired, and a PUT after expires is refused (403) and not processed", async () => {
    const t = await startCatalogKit();
    const upload = await t.createUpload();
    await t.scheduler.advance(HOUR - 1);
    assert.equal(t.json(await t.request({ url: `/v1/product-catalog/uploads/${upload.uploadId}` })).status, "initialized");
    await t.scheduler.advance(1);
    const expired = t.json(await t.request({ url: `/v1/product-catalog/uploads/${upload.uploadId}` }));
    assert.equal(expired.status, "expired");
    assert.equal(expired.lastUpdated, "2026-03-01T13:00:00.000Z");
    assert.equal(await t.sendFile(upload, ndjson(product("late"))), 403);
    await t.scheduler.advance(HOUR);
    assert.equal(t.json(await t.request({ url: `/v1/product-catalog/uploads/${upload.uploadId}` })).status, "expired");
    assert.equal(await t.kit.plugin("catalog").getProduct(t.company.companyId, "late"), undefined);
    await t.stop();
  });

  it("refuses a second PUT to the same URL (409) and a tampered signature (403), without touching the catalog", async () => {
    const t = await startCatalogKit();
    const upload = await t.createUpload();
    const tampered = new URL(upload.uploadUrl);
    tampered.searchParams.set("signature", "A".repeat(43));
    const wrongSignature = await t.request({ method: "PUT", url: pathOf(tampered.toString()), body: ndjson(product("evil")), token: null });
    assert.equal(wrongSignature.status, 403);
    assert.equal(t.json(wrongSignature).error.code, "invalid_signature");
    const longer = new URL(upload.uploadUrl);
    longer.searchParams.set("expires", String(Date.parse(upload.expires) + HOUR));
    assert.equal((await t.request({ method: "PUT", url: pathOf(longer.toString()), body: ndjson(product("evil")), token: null })).status, 403);
    assert.equal(t.json(await t.request({ url: `/v1/product-catalog/uploads/${upload.uploadId}` })).status, "initialized");

    assert.equal(await t.sendFile(upload, ndjson(product("p1", { name: "First" }))), 200);
    const again = await t.request({ method: "PUT", url: pathOf(upload.uploadUrl), body: ndjson(product("p1", { name: "Second" })), token: null });
    assert.equal(again.status, 409);
    assert.equal(t.json(again).error.code, "already_uploaded");
    await t.settle(upload);
    const catalog = t.kit.plugin("catalog");
    assert.equal((await catalog.getProduct(t.company.companyId, "p1"))?.name, "First");
    assert.equal(await catalog.getProduct(t.company.companyId, "evil"), undefined);
    await t.stop();
  });

  it("refuses a file above maxFileBytes (413), keeps nothing, and takes a smaller one after", async () => {
    const t = await startCatalogKit({ catalog: { maxFileBytes: 1_000 } });
    const upload = await t.createUpload();
    const big = ndjson(...Array.from({ length: 10 }, (_, i) => product(`p${i}`)));
    assert.ok(big.length > 1_000);
    assert.equal(await t.sendFile(upload, big), 413);
    assert.equal(t.json(await t.request({ url: `/v1/product-catalog/uploads/${upload.uploadId}` })).status, "initialized");
    assert.equal((await t.kit.jobs.list({ type: "catalog.upload.process" })).length, 0);
    assert.equal(await t.sendFile(upload, ndjson(product("small"))), 200);
    assert.equal((await t.settle(upload)).productsProcessed, 1);
    await t.stop();
  });
});
