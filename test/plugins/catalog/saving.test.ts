import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fakeClock } from "../../../adapters/clock/index.ts";
import { memoryObjectStorage } from "../../../adapters/object-storage/memory/index.ts";
import { manualScheduler } from "../../../adapters/scheduler/manual/index.ts";
import { memoryStorage } from "../../../adapters/storage/memory/index.ts";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import { catalogPlugin } from "../../../plugins/catalog/index.ts";
import { catalogCollections, HEADS, PRODUCTS, rowId, VARIANTS, variantHintId } from "../../../plugins/catalog/records.ts";
import { createReachkit, OBJECT_STORAGE, silentLogger, type Doc, type JobRecord, type ObjectStorage } from "../../../src/index.ts";
import { defaultPlugins, TEST_SECRET, type Json } from "../../support/test-kit.ts";
import { waitUntil } from "../../support/wait.ts";
import { failingStorage, ndjson, pathOf, product, startCatalogKit, variant } from "./support.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";

describe("saving a catalog upload", () => {
  it("saves each product with its variants, found by product id and by variant id", async () => {
    const t = await startCatalogKit();
    await t.upload(ndjson(product("shirt", { brand: "Acme", variants: [variant({ id: "shirt-s", position: 1 }), variant({ id: "shirt-m", position: 0 })] })));
    const catalog = t.kit.plugin("catalog");
    const shirt = await catalog.getProduct(t.company.companyId, "shirt");
    assert.equal(shirt?.brand, "Acme");
    assert.deepEqual(
      shirt?.variants.map((item) => item.id),
      ["shirt-s", "shirt-m"],
    );
    const medium = await catalog.getVariant(t.company.companyId, "shirt-m");
    assert.equal(medium?.productId, "shirt");
    assert.equal(medium?.variant.position, 0);
    assert.equal(await catalog.getVariant(t.company.companyId, "nope"), undefined);
    // A variant's hint row holds only what its id does not: the product.
    assert.deepEqual(await t.kit.storage.collection(VARIANTS).get(variantHintId(t.company.companyId, "shirt-m")), {
      id: variantHintId(t.company.companyId, "shirt-m"),
      productId: "shirt",
    });
    const other = (await t.kit.provisionCompany({ name: "Other" })).output;
    assert.equal(await catalog.getProduct(other.companyId as string, "shirt"), undefined);
    assert.equal(await catalog.getVariant(other.companyId as string, "shirt-m"), undefined);
    await t.stop();
  });

  it("updates by id: a partial catalog changes only the products it contains, and a product line replaces its variants", async () => {
    const t = await startCatalogKit();
    const catalog = t.kit.plugin("catalog");
    await t.upload(ndjson(product("a", { name: "A1" }), product("b", { name: "B1", variants: [variant({ id: "b-1" }), variant({ id: "b-2" })] })));
    const second = await t.upload(ndjson(product("b", { name: "B2", variants: [variant({ id: "b-1", name: "renamed" })] })));
    assert.equal(second.status, "completed");
    assert.equal((await catalog.getProduct(t.company.companyId, "a"))?.name, "A1");
    const b = await catalog.getProduct(t.company.companyId, "b");
    assert.equal(b?.name, "B2");
    assert.deepEqual(
      b?.variants.map((item) => [item.id, item.name]),
      [["b-1", "renamed"]],
    );
    assert.equal(await catalog.getVariant(t.company.companyId, "b-2"), undefined);
    await t.stop();
  });

  it("refuses a variant id used by another product (DUPLICATE_ID), in the file or in the catalog, until its product lets it go", async () => {
    const t = await startCatalogKit({ catalog: { batchSize: 2 } });
    const catalog = t.kit.plugin("catalog");
    const first = await t.upload(
      ndjson(
        product("p", { variants: [variant({ id: "shared" })] }),
        product("q"),
        product("r"),
        product("s", { variants: [variant({ id: "s-1" }), variant({ id: "shared" })] }),
      ),
    );
    assert.deepEqual(first.errors, [{ errorType: "DUPLICATE_ID", errorMessage: 'variants[1].id "shared" is already used by a variant on line 1', lineNum: 4 }]);
    assert.equal(await catalog.getProduct(t.company.companyId, "s"), undefined);

    const taken = await t.upload(ndjson(product("t", { variants: [variant({ id: "shared" })] })));
    assert.deepEqual(taken.errors, [{ errorType: "DUPLICATE_ID", errorMessage: 'variants[0].id "shared" belongs to product "p" in the catalog', lineNum: 1 }]);
    const sameUpload = await t.upload(ndjson(product("p", { variants: [variant({ id: "p-2" })] }), product("t", { variants: [variant({ id: "shared" })] })));
    assert.equal(sameUpload.errors[0].errorType, "DUPLICATE_ID", "a variant moves only once its old product no longer has it in the catalog");

    const moved = await t.upload(ndjson(product("t", { variants: [variant({ id: "shared" })] })));
    assert.deepEqual(moved.errors, []);
    assert.equal((await catalog.getVariant(t.company.companyId, "shared"))?.productId, "t");
    await t.stop();
  });

  it("finds a product id repeated in a later batch of the first upload (DUPLICATE_ID), and keeps the first", async () => {
    const t = await startCatalogKit({ catalog: { batchSize: 2 } });
    const upload = await t.upload(ndjson(product("a", { name: "first" }), product("b"), product("c"), product("d"), product("a", { name: "second", variants: [variant({ id: "a-other" })] })));
    assert.deepEqual(upload.errors, [{ errorType: "DUPLICATE_ID", errorMessage: 'id "a" is already used by the product on line 1', lineNum: 5 }]);
    assert.equal((await t.kit.plugin("catalog").getProduct(t.company.companyId, "a"))?.name, "first");
    await t.stop();
  });

  it("saves, in a later batch of the first upload, the ids of a product that an earlier batch refused", async () => {
    const t = await startCatalogKit({ catalog: { batchSize: 2 } });
    const upload = await t.upload(
      ndjson(
        product("a", { variants: [variant({ id: "a-1" })] }),
        product("b", { variants: [variant({ id: "b-1" }), variant({ id: "a-1" })] }),
        product("c"),
        product("d", { variants: [variant({ id: "b-1" })] }),
        product("b", { variants: [variant({ id: "b-2" })] }),
      ),
    );
    assert.deepEqual(upload.errors, [{ errorType: "DUPLICATE_ID", errorMessage: 'variants[1].id "a-1" is already used by a variant on line 1', lineNum: 2 }]);
    const catalog = t.kit.plugin("catalog");
    assert.equal((await catalog.getVariant(t.company.companyId, "b-1"))?.productId, "d");
    assert.deepEqual((await catalog.getProduct(t.company.companyId, "b"))?.variants.map((v) => v.id), ["b-2"]);
    await t.stop();
  });

  it("shows progress while it works: counters grow while the status is validating", async () => {
    const seen: Json[] = [];
    let read: (() => Promise<Json>) | undefined;
    const storage = failingStorage(memoryStorage(), (collection) => {
      if (collection === "catalog_products" && read) void read().then((upload) => seen.push(upload));
    });
    const t = await startCatalogKit({ storage, catalog: { batchSize: 2 } });
    const upload = await t.createUpload();
    read = async () => t.json(await t.request({ url: `/v1/product-catalog/uploads/${upload.uploadId}` }));
    await t.sendFile(upload, ndjson(...Array.from({ length: 7 }, (_, i) => product(`p${i}`))));
    const done = await t.settle(upload);
    assert.equal(done.productsProcessed, 7);
    assert.ok(seen.length >= 3, `${seen.length} snapshots`);
    assert.ok(seen.every((snapshot) => snapshot.status === "validating"));
    const counts = seen.map((snapshot) => snapshot.productsReceived);
    assert.ok(counts.some((count) => count > 0 && count < 7), `counters seen: ${counts}`);
    await t.stop();
  });

  it("leaves the catalog as it was when a save fails: status failed, the reason in errors, no journey event", async () => {
    let failing = false;
    let productWrites = 0;
    const storage = failingStorage(memoryStorage(), (collection) => {
      if (collection === "catalog_products" && failing && ++productWrites % 3 === 0) throw new Error("disk full");
    });
    const t = await startCatalogKit({ storage, catalog: { batchSize: 2 } });
    const catalog = t.kit.plugin("catalog");
    const events: string[] = [];
    catalog.onJourneyEvent("catalog.variant.price_dropped", (event) => void events.push(event.variantId));
    await t.upload(ndjson(product("p0", { name: "Old" })));
    failing = true;
    const changed = [product("p0", { name: "New", variants: [variant({ id: "p0-v1", prices: [{ currencyCode: "USD", amount: "1.00" }] })] })];
    for (let i = 1; i <= 6; i++) changed.push(product(`p${i}`));
    const upload = await t.createUpload();
    assert.equal(await t.sendFile(upload, ndjson(...changed)), 200);
    await t.scheduler.advance(60_000);
    const failed = t.json(await t.request({ url: `/v1/product-catalog/uploads/${upload.uploadId}` }));
    assert.equal(failed.status, "failed");
    assert.deepEqual(failed.errors, [
      { errorType: "SAVE_FAILED", errorMessage: "the catalog could not be saved: disk full. Nothing from this upload was saved.", lineNum: 0 },
    ]);
    assert.equal((await catalog.getProduct(t.company.companyId, "p0"))?.name, "Old");
    for (let i = 1; i <= 6; i++) assert.equal(await catalog.getProduct(t.company.companyId, `p${i}`), undefined);
    assert.deepEqual(events, []);
    assert.equal((await t.kit.jobs.list({ type: "catalog.upload.process", status: "done" })).at(-1)?.attempts, 3);

    failing = false;
    const retried = await t.upload(ndjson(...changed));
    assert.equal(retried.status, "completed");
    assert.equal((await catalog.getProduct(t.company.companyId, "p0"))?.name, "New");
    assert.deepEqual(events, ["p0-v1"]);
    await t.stop();
  });

  it("retries a save that failed once, and completes it", async () => {
    let failures = 1;
    const storage = failingStorage(memoryStorage(), (collection) => {
      if (collection === "catalog_products" && failures > 0) {
        failures--;
        throw new Error("database is locked");
      }
    });
    const t = await startCatalogKit({ storage });
    const upload = await t.createUpload();
    await t.sendFile(upload, ndjson(product("p1"), product("p2")));
    await t.scheduler.flush();
    assert.equal(t.json(await t.request({ url: `/v1/product-catalog/uploads/${upload.uploadId}` })).status, "validating");
    await t.scheduler.advance(1_000);
    const done = t.json(await t.request({ url: `/v1/product-catalog/uploads/${upload.uploadId}` }));
    assert.equal(done.status, "completed");
    assert.equal(done.productsProcessed, 2);
    assert.deepEqual(done.errors, []);
    await t.stop();
  });

  it("processes the uploads of a company one at a time, in the order their files arrived", async () => {
    const t = await startCatalogKit();
    const first = await t.createUpload();
    const second = await t.createUpload();
    await t.sendFile(second, ndjson(product("p", { name: "from the second upload" })));
    t.clock.advance(5);
    await t.sendFile(first, ndjson(product("p", { name: "from the first upload" })));
    await t.scheduler.advance(5_000);
    const [a, b] = [await t.settle(first), await t.settle(second)];
    assert.equal(a.status, "completed");
    assert.equal(b.status, "completed");
    assert.ok(Date.parse(a.lastUpdated) >= Date.parse(b.lastUpdated));
    assert.equal((await t.kit.plugin("catalog").getProduct(t.company.companyId, "p"))?.name, "from the first upload");
    await t.stop();
  });

  it("fails an upload whose processing job died, so the uploads after it go on", async () => {
    const t = await startCatalogKit();
    const stuck = await t.createUpload();
    await t.sendFile(stuck, ndjson(product("stuck")));
    const job = (await t.kit.jobs.list({ type: "catalog.upload.process" }))[0]!;
    await t.kit.storage.collection<JobRecord>("reachkit_jobs").update(job.id, { status: "dead", activeKey: null });
    const next = await t.upload(ndjson(product("next")));
    assert.equal(next.status, "completed");
    const failed = t.json(await t.request({ url: `/v1/product-catalog/uploads/${stuck.uploadId}` }));
    assert.equal(failed.status, "failed");
    assert.equal(failed.errors[0].errorType, "SAVE_FAILED");
    assert.match(failed.errors[0].errorMessage, /its job failed on every attempt/);
    await t.stop();
  });

  it("ignores objects of the storage that are not catalog files", async () => {
    const t = await startCatalogKit();
    const objects = t.kit.resolve(OBJECT_STORAGE);
    const target = await objects.createUploadTarget("avatars/someone.png", { expiresAt: t.clock.now() + 60_000, maxBytes: 100 });
    assert.equal((await t.request({ method: "PUT", url: pathOf(target.url), body: "png", token: null })).status, 200);
    assert.equal((await t.kit.jobs.list({ type: "catalog.upload.process" })).length, 0);
    await t.stop();
  });
});

describe("catalog processing survives a restart", () => {
  const openKit = (file: string, objectStorage: ObjectStorage, clock = fakeClock("2026-03-01T12:00:00.000Z")) => {
    const scheduler = manualScheduler(clock);
    const kit = createReachkit({
      storage: sqliteStorage({ filename: file }),
      scheduler,
      clock,
      objectStorage,
      logger: silentLogger(),
      secret: TEST_SECRET,
      plugins: [...defaultPlugins(), catalogPlugin({ batchSize: 2 })],
    });
    return { kit, scheduler, clock };
  };

  it("processes a file received before a restart, and starts over a run the stop interrupted, without spending an attempt", async () => {
    const file = join(temporaryDirectory("catalog"), "reachkit.db");
    const clock = fakeClock("2026-03-01T12:00:00.000Z");
    const objectStorage = memoryObjectStorage({ clock });
    const before = openKit(file, objectStorage, clock);
    await before.kit.start();
    const { output } = await before.kit.provisionCompany({ name: "Acme" });
    const headers = { authorization: `Bearer ${output.apiKey as string}` };
    const upload = (await before.kit.inject({ method: "POST", url: "/v1/product-catalog/uploads", headers })).json<Json>();
    const lines = ndjson(...Array.from({ length: 9 }, (_, i) => product(`p${i}`)));
    assert.equal((await before.kit.inject({ method: "PUT", url: pathOf(upload.uploadUrl), body: lines })).status, 200);
    await before.kit.stop();

    // The next kit takes the queued job as it starts; it is stopped right after the first batch is saved.
    const during = openKit(file, objectStorage, clock);
    let stopRequested!: (stopping: Promise<void>) => void;
    const stopped = new Promise<Promise<void>>((resolve) => (stopRequested = resolve));
    const products = during.kit.storage.collection("catalog_products");
    const upsertMany = products.upsertMany.bind(products);
    let calls = 0;
    products.upsertMany = async (docs) => {
      await upsertMany(docs);
      if (++calls === 1) {
        stopRequested(during.kit.stop());
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    await during.kit.start();
    await (await stopped);

    const after = openKit(file, objectStorage, clock);
    await after.kit.start();
    // The runner took the requeued job at start; it runs on its own, so wait for it to settle.
    const status = async () => (await after.kit.plugin("catalog").getUpload(output.companyId as string, upload.uploadId))!;
    await waitUntil("the requeued upload settled", async () => (await status()).status !== "validating");
    const done = await status();
    assert.equal(done.status, "completed");
    assert.equal(done.productsReceived, 9);
    assert.equal(done.productsProcessed, 9);
    assert.equal((await after.kit.plugin("catalog").getProduct(output.companyId as string, "p8"))?.id, "p8");
    const jobs = await after.kit.jobs.list({ type: "catalog.upload.process" });
    assert.deepEqual(
      jobs.map((job) => [job.status, job.attempts]),
      [
        ["done", 1],
        ["done", 1],
      ],
    );
    await after.kit.stop();
  });
});

describe("product rows of an older database", () => {
  it("are rewritten at start-up from their JSON text to the product, and read as before", async () => {
    const storage = memoryStorage();
    await storage.ensureCollections(catalogCollections);
    const collection = (name: string) => storage.collection<Doc & Record<string, unknown>>(name);
    const shirt = product("shirt", { variants: [variant({ id: "shirt-s" })] });
    const companyId = "older-company";
    await collection(HEADS).upsert({ id: companyId, companyId, version: 1, updatedAt: 0 });
    const rows = collection(PRODUCTS);
    await rows.upsert({ id: rowId(companyId, 1, "shirt"), companyId, productId: "shirt", version: 1, line: 1, productJson: JSON.stringify(shirt) });
    // More rows than one page of the migration (1,000), so it goes on past the first page.
    await rows.upsertMany(
      Array.from({ length: 1_200 }, (_, i) => ({ id: rowId(companyId, 1, `p${i}`), companyId, productId: `p${i}`, version: 1, line: i + 2, productJson: JSON.stringify(product(`p${i}`)) })),
    );
    await collection(VARIANTS).upsert({ id: variantHintId(companyId, "shirt-s"), companyId, variantId: "shirt-s", productId: "shirt" });

    const t = await startCatalogKit({ storage });
    const catalog = t.kit.plugin("catalog");
    assert.deepEqual(await catalog.getProduct(companyId, "shirt"), shirt);
    assert.equal((await catalog.getVariant(companyId, "shirt-s"))?.productId, "shirt");
    assert.equal((await catalog.getProduct(companyId, "p1199"))?.id, "p1199");
    const stored = (await rows.find()).items;
    assert.equal(stored.length, 1_201);
    assert.deepEqual(stored.filter((row) => "productJson" in row || !("product" in row)), []);
    await t.stop();
  });
});
