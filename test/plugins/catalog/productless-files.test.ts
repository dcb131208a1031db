import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { memoryStorage } from "../../../adapters/storage/memory/index.ts";
import { UPLOADS } from "../../../plugins/catalog/records.ts";
import type { Storage } from "../../../src/index.ts";
import { withCollectionMethod } from "../../support/storage-wrappers.ts";
import { ndjson, product, startCatalogKit } from "./support.ts";

const noProducts = (lines: number) => ({
  errorType: "NO_PRODUCTS",
  errorMessage: `the first ${lines} lines hold no product (each one is blank or has errors): reading stopped at line ${lines}, and nothing from this upload was saved`,
  lineNum: lines,
});

/** A storage that counts the writes of upload records (the progress of a run is one each). */
function countingUploadWrites(inner: Storage): { storage: Storage; writes: () => number } {
  let writes = 0;
  const storage = withCollectionMethod(inner, "update", (update, collection) => (id, patch, options) => {
    if (collection === UPLOADS) writes++;
    return update(id, patch, options);
  });
  return { storage, writes: () => writes };
}

describe("files that hold no product", () => {
  it("ends a file whose first 100,000 lines are blank there: failed, with a NO_PRODUCTS entry, and the product after them unread", async () => {
    const t = await startCatalogKit();
    const done = await t.upload(`${"\n".repeat(100_000)}${JSON.stringify(product("late"))}\n`);
    assert.equal(done.status, "failed");
    assert.deepEqual(done.errors, [noProducts(100_000)]);
    assert.equal(done.productsReceived, 0);
    assert.equal(done.productsProcessed, 0);
    assert.equal(await t.kit.plugin("catalog").getProduct(t.company.companyId, "late"), undefined);
    // The company's next upload runs as usual.
    assert.equal((await t.upload(ndjson(product("next")))).status, "completed");
    await t.stop();
  });

  it("counts blank and invalid lines alike, keeps their errors and counts, and fails a validate-only upload too", async () => {
    const t = await startCatalogKit({ catalog: { maxLinesWithoutProduct: 50 } });
    const lines = [...Array.from({ length: 20 }, () => "{not json"), ...Array.from({ length: 10 }, () => "  "), ...Array.from({ length: 20 }, () => "{}"), product("p51")];
    for (const validateOnly of [false, true]) {
      const done = await t.upload(ndjson(...lines), { validateOnly });
      assert.equal(done.status, "failed");
      assert.equal(done.productsReceived, 40);
      assert.equal(done.productsProcessed, 0);
      assert.deepEqual(done.errors.at(-1), noProducts(50));
      assert.equal(done.errors.filter((error: { errorType: string }) => error.errorType === "INVALID_JSON").length, 10);
      const counts = (await t.kit.plugin("catalog").getUpload(t.company.companyId, done.uploadId))?.errorCounts;
      assert.deepEqual(counts, { INVALID_JSON: 20, MISSING_FIELD: 100, NO_PRODUCTS: 1 });
    }
    assert.equal(await t.kit.plugin("catalog").getProduct(t.company.companyId, "p51"), undefined);
    await t.stop();
  });

  it("reads on when a product comes by the last line of the count, and never stops a file that has one", async () => {
    const t = await startCatalogKit({ catalog: { maxLinesWithoutProduct: 50 } });
    const atTheLimit = await t.upload(`${"x\n".repeat(30)}${"\n".repeat(19)}${ndjson(product("p50"))}`);
    assert.equal(atTheLimit.status, "completed");
    assert.equal(atTheLimit.productsProcessed, 1);
    const laterLines = await t.upload(`${ndjson(product("first"))}${"\n".repeat(500)}${"x\n".repeat(100)}${ndjson(product("last"))}`);
    assert.equal(laterLines.status, "completed");
    assert.equal(laterLines.productsProcessed, 2);
    assert.deepEqual(
      laterLines.errors.map((error: { errorType: string; lineNum: number }) => `${error.errorType} ${error.lineNum}`),
      Array.from({ length: 10 }, (_, i) => `INVALID_JSON ${502 + i}`),
    );
    await t.stop();
  });

  it("writes no progress for blank lines: a product and 100,000 blank lines write the upload as often as the product alone", async () => {
    const writesFor = async (file: string) => {
      const { storage, writes } = countingUploadWrites(memoryStorage());
      const t = await startCatalogKit({ storage });
      const done = await t.upload(file);
      assert.equal(done.status, "completed");
      await t.stop();
      return writes();
    };
    const alone = await writesFor(ndjson(product("p1")));
    assert.equal(await writesFor(`${ndjson(product("p1"))}${"\n".repeat(100_000)}`), alone);
    assert.equal(await writesFor(`${ndjson(product("p1"))}${"\r\n".repeat(100_000)}`), alone);
  });
});
