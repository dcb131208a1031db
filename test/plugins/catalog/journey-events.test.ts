import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compareDecimals } from "../../../plugins/catalog/decimal.ts";
import type { JourneyEventName } from "../../../plugins/catalog/index.ts";
import type { Json } from "../../support/test-kit.ts";
import { ndjson, product, startCatalogKit, variant, type CatalogTestKit, type VariantInput } from "./support.ts";

const NAMES: JourneyEventName[] = ["catalog.variant.back_in_stock", "catalog.variant.low_inventory", "catalog.variant.price_dropped"];

/** A kit recording every journey event, and a way to save one variant of product "tee" as given. */
async function journeyKit(options: { lowInventoryThreshold?: number } = {}) {
  const t = await startCatalogKit({ catalog: options });
  const events: Array<{ name: JourneyEventName; payload: Json }> = [];
  for (const name of NAMES) t.kit.plugin("catalog").onJourneyEvent(name, (payload) => void events.push({ name, payload }));
  const save = async (fields: Omit<VariantInput, "id">, more: Json[] = []) => {
    const done = await t.upload(ndjson(product("tee", { images: [{ src: "https://cdn.example/tee.jpg" }], variants: [variant({ id: "tee-m", ...fields })] }), ...more));
    assert.deepEqual(done.errors, []);
  };
  const take = () => events.splice(0).map((event) => event.name);
  return { t, events, save, take };
}

const usd = (amount: string, compareAtPrice?: string) => ({ currencyCode: "USD", amount, ...(compareAtPrice ? { compareAtPrice } : {}) });

describe("catalog journey events", () => {
  it("back in stock: availableForPurchase false → true, with company, product, variant and before/after values", async () => {
    const { t, events, save, take } = await journeyKit();
    await save({ available: false });
    assert.deepEqual(take(), [], "no event on the first upload of a variant");
    await save({ available: true });
    assert.equal(events.length, 1);
    const [event] = events;
    assert.equal(event!.name, "catalog.variant.back_in_stock");
    assert.equal(event!.payload.companyId, t.company.companyId);
    assert.equal(event!.payload.productId, "tee");
    assert.equal(event!.payload.variantId, "tee-m");
    assert.deepEqual(event!.payload.product, { id: "tee", name: "Product tee", link: "https://shop.example.com/p/tee", imageUrl: "https://cdn.example/tee.jpg" });
    assert.equal(event!.payload.variant.availableForPurchase, true);
    assert.deepEqual(event!.payload.before, { availableForPurchase: false });
    assert.deepEqual(event!.payload.after, { availableForPurchase: true });
    assert.equal(typeof event!.payload.uploadId, "string");
    take();
    await save({ available: true });
    assert.deepEqual(take(), [], "the same values again change nothing");
    await t.stop();
  });

  it("never counts inventory coming back as back in stock", async () => {
    const { t, save, take } = await journeyKit();
    await save({ available: false, inventory: 0 });
    await save({ available: false, inventory: 500 });
    assert.deepEqual(take(), []);
    await t.stop();
  });

  it("low inventory: inventoryQuantity falls to or below the threshold (default 10), once", async () => {
    const { t, events, save, take } = await journeyKit();
    await save({ inventory: 50 });
    await save({ inventory: 11 });
    assert.deepEqual(take(), []);
    await save({ inventory: 10 });
    assert.equal(events[0]?.name, "catalog.variant.low_inventory");
    assert.equal(events[0]?.payload.threshold, 10);
    assert.deepEqual(events[0]?.payload.before, { inventoryQuantity: 11 });
    assert.deepEqual(events[0]?.payload.after, { inventoryQuantity: 10 });
    take();
    await save({ inventory: 3 });
    assert.deepEqual(take(), [], "already at or below the threshold");
    await save({});
    await save({ inventory: 0 });
    assert.deepEqual(take(), [], "an inventory that was not tracked cannot fall");
    await t.stop();
  });

  it("takes the low-inventory threshold from the plugin options", async () => {
    const { t, save, take } = await journeyKit({ lowInventoryThreshold: 25 });
    await save({ inventory: 26 });
    await save({ inventory: 25 });
    assert.deepEqual(take(), ["catalog.variant.low_inventory"]);
    await t.stop();
  });

  it("price dropped: the lowest price of a currency decreases, or a compare-at price is newly set", async () => {
    const { t, events, save, take } = await journeyKit();
    await save({ prices: [usd("20.00"), usd("25.00"), { currencyCode: "EUR", amount: "18.00" }] });
    await save({ prices: [usd("19.5"), usd("30.00"), { currencyCode: "EUR", amount: "18.00" }] });
    assert.equal(events.length, 1);
    assert.equal(events[0]?.payload.currencyCode, "USD");
    assert.deepEqual(events[0]?.payload.before, { amount: "20.00" });
    assert.deepEqual(events[0]?.payload.after, { amount: "19.5" });
    take();
    await save({ prices: [usd("19.50", "25.00"), { currencyCode: "EUR", amount: "18.00" }] });
    assert.deepEqual(
      events.map((event) => [event.name, event.payload.currencyCode, event.payload.after]),
      [["catalog.variant.price_dropped", "USD", { amount: "19.50", compareAtPrice: "25.00" }]],
      "on sale: the same amount with a compare-at price",
    );
    take();
    await save({ prices: [usd("19.50", "24.00"), { currencyCode: "EUR", amount: "18.01" }] });
    await save({ prices: [usd("21.00"), { currencyCode: "GBP", amount: "1.00" }] });
    assert.deepEqual(take(), [], "already on sale, price up, a new currency");
    await t.stop();
  });

  it("emits nothing for a variant new to an existing product, a validate-only upload, or the same file twice", async () => {
    const { t, take } = await journeyKit();
    const file = (available: boolean) =>
      ndjson(product("tee", { variants: [variant({ id: "tee-m", available: false }), ...(available ? [variant({ id: "tee-l", available: true })] : [])] }));
    await t.upload(file(false));
    await t.upload(file(true));
    await t.upload(ndjson(product("tee", { variants: [variant({ id: "tee-m", available: true })] })), { validateOnly: true });
    assert.deepEqual(take(), []);
    const twice = ndjson(product("tee", { variants: [variant({ id: "tee-m", available: true })] }));
    await t.upload(twice);
    assert.deepEqual(take(), ["catalog.variant.back_in_stock"]);
    await t.upload(twice);
    assert.deepEqual(take(), []);
    await t.stop();
  });

  it("stops delivering to a listener once it unsubscribes", async () => {
    const t: CatalogTestKit = await startCatalogKit();
    const seen: string[] = [];
    const stop = t.kit.plugin("catalog").onJourneyEvent("catalog.variant.back_in_stock", (event) => void seen.push(event.variantId));
    await t.upload(ndjson(product("a", { variants: [variant({ id: "a-1", available: false })] })));
    await t.upload(ndjson(product("a", { variants: [variant({ id: "a-1", available: true })] })));
    stop();
    await t.upload(ndjson(product("a", { variants: [variant({ id: "a-1", available: false })] })));
    await t.upload(ndjson(product("a", { variants: [variant({ id: "a-1", available: true })] })));
    assert.deepEqual(seen, ["a-1"]);
    await t.stop();
  });
});

describe("decimal amounts", () => {
  it("compares decimal strings exactly", () => {
    assert.ok(compareDecimals("19.99", "20") < 0);
    assert.ok(compareDecimals("100", "99.999") > 0);
    assert.equal(compareDecimals("019.50", "19.5"), 0);
    assert.ok(compareDecimals("0.1", "0.09") > 0);
    assert.ok(compareDecimals("12345678901234.01", "12345678901234.001") > 0);
  });
});
