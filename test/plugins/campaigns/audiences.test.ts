import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import type { Json } from "../../support/test-kit.ts";
import { ndjson, pathOf, product, variant } from "../catalog/support.ts";
import { AUDIENCE_PAGE, SEGMENT_AUDIENCE } from "../../../plugins/campaigns/index.ts";
import { startCampaignsKit, type CampaignsTestKit } from "./support.ts";

const DAY = 86_400_000;
const item = (productId: string, value: number) => ({ items: [{ productId, productVariantId: `${productId}-v1`, name: productId, price: [{ value, currency: "USD" }] }] });

describe("segment audiences: catalog products, one send per person, privacy", () => {
  let t: CampaignsTestKit;
  beforeEach(async () => {
    t = await startCampaignsKit();
  });
  afterEach(() => t.stop());

  async function uploadCatalog(lines: readonly Json[]): Promise<void> {
    const upload = await t.ok("POST", "/v1/product-catalog/uploads", {});
    assert.equal((await t.request({ method: "PUT", url: pathOf(upload.uploadUrl), body: ndjson(...lines), token: null })).status, 200);
    await t.scheduler.flush();
  }

  it("matches people who viewed, carted or bought a product of a category, collection, brand or tag, within a price range and a window", async () => {
    await uploadCatalog([
      product("boot", { categories: ["shoes"], brand: "Acme", tags: ["winter"], collections: ["outdoor"], variants: [variant({ id: "boot-v1" })] }),
      product("mug", { categories: ["kitchen"], brand: "Other", variants: [variant({ id: "mug-v1" })] }),
    ]);
    for (const phone of ["+19148440001", "+19148440002", "+19148440003"]) await t.person(phone);
    await t.ok("POST", "/v1/events/ecommerce/product-view", { user: { phone: "+19148440001" }, ...item("boot", 120) });
    await t.ok("POST", "/v1/events/ecommerce/purchase", { user: { phone: "+19148440002" }, ...item("boot", 40), orderId: "o-1" });
    await t.ok("POST", "/v1/events/ecommerce/add-to-cart", { user: { phone: "+19148440003" }, ...item("mug", 10) });
    await t.scheduler.flush();
    const size = async (rule: Json) => (await t.ok("GET", `/v1/segments/${await t.segment(rule)}/preview`)).size;
    assert.equal(await size({ product: { action: "viewed", within: "P7D", category: "shoes" } }), 1);
    assert.equal(await size({ product: { action: "bought", within: "P7D", brand: "Acme" } }), 1);
    assert.equal(await size({ or: [{ product: { action: "viewed", within: "P7D", tag: "winter" } }, { product: { action: "bought", within: "P7D", collection: "outdoor" } }] }), 2);
    assert.equal(await size({ product: { action: "viewed", within: "P7D", category: "shoes", maxPrice: 100 } }), 0);
    assert.equal(await size({ product: { action: "carted", within: "P7D", category: "kitchen", minPrice: 5, maxPrice: 20 } }), 1);
    t.clock.advance(8 * DAY);
    assert.equal(await size({ product: { action: "viewed", within: "P7D", category: "shoes" } }), 0);
    assert.equal(await size({ product: { action: "viewed", within: "P30D", category: "shoes" } }), 1);
  });

  it("a preview of many pages leaves the process to its other work between pages", async () => {
    const companyId = t.company.companyId;
    const now = t.clock.now();
    const ids = Array.from({ length: 2 * AUDIENCE_PAGE + 1 }, (_, i) => `p${String(i).padStart(5, "0")}`);
    await t.kit.storage.collection("profiles_profiles").upsertMany(ids.map((id) => ({ id, companyId, createdAt: now, updatedAt: now })));
    await t.kit.storage.collection("profiles_attributes").upsertMany(ids.map((id) => ({ id: `${id}:tier`, companyId, profileId: id, name: "tier", value: "gold", setAt: now })));
    let turned = false;
    const previewing = t.kit.resolve(SEGMENT_AUDIENCE).preview(companyId, { attribute: { name: "tier", op: "eq", value: "gold" } }, 10);
    setImmediate(() => (turned = true));
    const preview = await previewing;
    assert.equal(preview.size, ids.length);
    assert.equal(turned, true, "the event loop turned while the pages were read");
  });

  it("sends once per person when its jobs run again after their work committed", async () => {
    await t.person("+19148440001", { tier: "gold" });
    const created = await t.ok("POST", "/v1/campaigns", { name: "Sale", segmentId: await t.segment({ attribute: { name: "tier", op: "eq", value: "gold" } }), channel: "sms", text: "Sale" }, 201);
    await t.ok("POST", `/v1/campaigns/${created.id}/send`, {});
    await t.scheduler.flush();
    // A job that runs again after its work committed (at-least-once) finds nothing left to do.
    const sender = t.kit.resolve((await import("../../../plugins/campaigns/index.ts")).CAMPAIGN_SENDER);
    await sender.readAudience({ campaignId: created.id });
    await sender.send({ campaignId: created.id });
    await t.scheduler.flush();
    assert.deepEqual(await t.texts("+19148440001"), ["Sale"]);
    assert.equal((await t.ok("GET", `/v1/campaigns/${created.id}/results`)).audience, 1);
  });

  it("a deletion request removes the person's recipients, links and clicks", async () => {
    await t.person("+19148440001", { tier: "gold" });
    const id = await t.campaign({ segmentId: await t.segment({ attribute: { name: "tier", op: "eq", value: "gold" } }), text: "Sale {link}", link: "https://shop.example.com/sale" });
    const code = /\/l\/(\S{12})/.exec((await t.texts("+19148440001"))[0]!)![1]!;
    assert.equal((await t.request({ url: `/l/${code}`, token: null })).status, 302);
    await t.kit.deleteSubjectData({ companyId: t.company.companyId, phone: "+19148440001" });
    const results = await t.ok("GET", `/v1/campaigns/${id}/results`);
    assert.deepEqual({ audience: results.audience, clicks: results.clicks }, { audience: 0, clicks: 0 });
    assert.equal((await t.request({ url: `/l/${code}`, token: null })).status, 404);
  });
});
