import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { memoryStorage } from "../../../adapters/storage/memory/index.ts";
import { failingStorage, ndjson, product, startCatalogKit, variant } from "./support.ts";

const usd = (amount: string) => [{ currencyCode: "USD", amount }];

describe("catalog products and variant history for people", () => {
  it("pages the committed products in id order, finds them by id beginning, and never shows another company's", async () => {
    const t = await startCatalogKit();
    const catalog = t.kit.plugin("catalog");
    const ids = ["cap-1", "cap-2", "mug-1", "mug-2", "mug-3", "tee-1"];
    await t.upload(ndjson(...ids.map((id) => product(id))));
    // A second save rewrites some products: each still shows once, as saved last.
    await t.upload(ndjson(product("mug-2", { name: "Mug, second save" }), product("tee-1")));
    const pages: string[][] = [];
    let after: string | undefined;
    do {
      const page = await catalog.listProducts(t.company.companyId, { after, limit: 4 });
      pages.push(page.items.map((item) => item.id));
      after = page.nextCursor;
    } while (after);
    assert.deepEqual(pages, [["cap-1", "cap-2", "mug-1", "mug-2"], ["mug-3", "tee-1"]]);
    const mugs = await catalog.listProducts(t.company.companyId, { search: "mug", limit: 2 });
    assert.deepEqual(mugs.items.map((item) => [item.id, item.name]), [["mug-1", "Product mug-1"], ["mug-2", "Mug, second save"]]);
    assert.deepEqual((await catalog.listProducts(t.company.companyId, { search: "mug", after: mugs.nextCursor })).items.map((item) => item.id), ["mug-3"]);
    const other = (await t.kit.provisionCompany({ name: "Globex" })).output as { companyId: string };
    assert.deepEqual((await catalog.listProducts(other.companyId)).items, []);
    await t.stop();
  });

  it("keeps each save that changed a variant's lowest price, stock or availability, newest first; an unchanged save or the first adds none", async () => {
    const t = await startCatalogKit();
    const catalog = t.kit.plugin("catalog");
    const save = (fields: Parameters<typeof variant>[0]) => t.upload(ndjson(product("tee", { variants: [variant(fields), variant({ id: "tee-l" })] })));
    const first = await save({ id: "tee-m", prices: usd("20.00"), inventory: 10 });
    t.clock.advance(60_000);
    await save({ id: "tee-m", prices: usd("20.00"), inventory: 10 });
    t.clock.advance(60_000);
    const cheaper = await save({ id: "tee-m", prices: [...usd("15.00"), { currencyCode: "USD", amount: "18.00" }], inventory: 10 });
    t.clock.advance(60_000);
    const soldOut = await save({ id: "tee-m", prices: usd("15.00"), inventory: 0, available: false });
    const history = await catalog.variantHistory(t.company.companyId, "tee-m");
    assert.deepEqual(
      history.map((change) => [change.uploadId, change.before, change.after]),
      [
        [soldOut.uploadId, { prices: { USD: { amount: "15.00" } }, inventoryQuantity: 10, availableForPurchase: true }, { prices: { USD: { amount: "15.00" } }, inventoryQuantity: 0, availableForPurchase: false }],
        [cheaper.uploadId, { prices: { USD: { amount: "20.00" } }, inventoryQuantity: 10, availableForPurchase: true }, { prices: { USD: { amount: "15.00" } }, inventoryQuantity: 10, availableForPurchase: true }],
      ],
    );
    assert.equal(history[1]!.at, "2026-03-01T12:02:00.000Z");
    assert.notEqual(first.uploadId, undefined);
    assert.deepEqual(await catalog.variantHistory(t.company.companyId, "tee-l"), [], "a variant that never changed");
    const other = (await t.kit.provisionCompany({ name: "Globex" })).output as { companyId: string };
    assert.deepEqual(await catalog.variantHistory(other.companyId, "tee-m"), []);
    await t.stop();
  });

  it("records no change from a check-only upload, nor from a save that failed", async () => {
    let failing = false;
    // A save of two batches whose second fails: the first batch's history was written by then.
    const storage = failingStorage(memoryStorage(), (collection, docs) => {
      if (failing && collection === "catalog_products" && (docs as Array<{ productId: string }>).some((row) => row.productId === "zz-last")) throw new Error("disk full");
    });
    const t = await startCatalogKit({ storage, catalog: { maxAttempts: 1, batchSize: 1 } });
    const catalog = t.kit.plugin("catalog");
    const line = (amount: string) => ndjson(product("tee", { variants: [variant({ id: "tee-m", prices: usd(amount), inventory: 5 })] }));
    await t.upload(line("20.00"));
    const checked = await t.upload(line("10.00"), { validateOnly: true });
    assert.equal(checked.status, "validated");
    failing = true;
    const failed = await t.upload(line("9.00") + ndjson(product("zz-last")));
    assert.equal(failed.status, "failed");
    failing = false;
    // The next save takes the failed one's version: what the failed save wrote must not show through it.
    await t.upload(ndjson(product("cap")));
    assert.deepEqual(await catalog.variantHistory(t.company.companyId, "tee-m"), []);
    await t.upload(line("12.00"));
    assert.deepEqual((await catalog.variantHistory(t.company.companyId, "tee-m")).map((change) => change.after.prices.USD?.amount), ["12.00"]);
    await t.stop();
  });
});
