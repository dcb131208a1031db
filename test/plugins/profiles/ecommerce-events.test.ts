import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MAX_ITEMS } from "../../../plugins/profiles/index.ts";
import { PHONE, eventsOf, post, startProfilesKit, storedCounts, tokenWith } from "./support.ts";

const mug = { productId: "p-1", productVariantId: "p-1-blue", productImage: "https://acme.example/m.png", productUrl: "https://acme.example/p/1", name: "Mug", price: [{ value: 12.5, currency: "usd" }], quantity: 2 };
const ecommerce = (body: Record<string, unknown> = {}) => ({ items: [mug], user: { phone: PHONE }, ...body });

describe("POST /v1/events/ecommerce/{product-view,add-to-cart,purchase}", () => {
  it("answers 200 with an empty body for each, and keeps the products, orderId and salesChannel in the timeline", async () => {
    const t = await startProfilesKit();
    const recorded: string[] = [];
    t.kit.events.on("profile.event.recorded", (event) => void recorded.push(event.kind));
    for (const path of ["product-view", "add-to-cart"]) {
      const response = await post(t, `/v1/events/ecommerce/${path}`, ecommerce({ orderId: "ignored here" }));
      assert.deepEqual([response.status, response.body], [200, ""]);
    }
    t.clock.advance(1000);
    const purchase = await post(t, "/v1/events/ecommerce/purchase", ecommerce({ items: [{ ...mug, price: [{ value: 25 }] }], orderId: "A-1001", salesChannel: { channelType: "IN_STORE" } }));
    assert.deepEqual([purchase.status, purchase.body], [200, ""]);
    const events = await eventsOf(t, "phone", PHONE);
    assert.deepEqual(
      events.map(({ kind, orderId, salesChannel }) => ({ kind, orderId, salesChannel })),
      [
        { kind: "purchase", orderId: "A-1001", salesChannel: { channelType: "IN_STORE" } },
        { kind: "add_to_cart", orderId: undefined, salesChannel: undefined },
        { kind: "product_view", orderId: undefined, salesChannel: undefined },
      ],
    );
    assert.deepEqual(events[0]!.items, [{ ...mug, price: [{ value: 25, currency: "USD" }] }], "currency defaults to USD");
    assert.deepEqual(events[2]!.items, [{ ...mug, price: [{ value: 12.5, currency: "USD" }] }], "currency upper-cased");
    assert.deepEqual(recorded, ["product_view", "add_to_cart", "purchase"]);
    await t.stop();
  });

  it("answers 400 naming the field of a malformed product or purchase, and stores nothing", async () => {
    const t = await startProfilesKit();
    const before = await storedCounts(t);
    const item = (fields: Record<string, unknown>) => ({ items: [{ ...mug, ...fields }] });
    const refused: Array<[string, Record<string, unknown>, string]> = [
      ["product-view", { items: [] }, "items"],
      ["product-view", { items: undefined }, "items"],
      ["product-view", { items: Array.from({ length: MAX_ITEMS + 1 }, () => mug) }, "items"],
      ["add-to-cart", item({ productId: undefined }), "items.0.productId"],
      ["add-to-cart", item({ productVariantId: 5 }), "items.0.productVariantId"],
      ["add-to-cart", item({ price: [] }), "items.0.price"],
      ["add-to-cart", item({ price: [{ value: "12.50" }] }), "items.0.price.0.value"],
      ["add-to-cart", item({ price: [{ value: -1 }] }), "items.0.price.0.value"],
      ["add-to-cart", item({ price: [{ value: 1, currency: "dollars" }] }), "items.0.price.0.currency"],
      ["add-to-cart", item({ quantity: 1.5 }), "items.0.quantity"],
      ["purchase", { salesChannel: { channelType: "MAIL" } }, "salesChannel.channelType"],
      ["purchase", { orderId: "" }, "orderId"],
      ["purchase", { user: { externalIdentifiers: { clientUserId: "nobody" } } }, "user"],
      ["purchase", { occurredAt: "yesterday" }, "occurredAt"],
    ];
    for (const [path, body, field] of refused) {
      const response = await post(t, `/v1/events/ecommerce/${path}`, ecommerce(body));
      assert.equal(response.status, 400, `${path} ${JSON.stringify(body).slice(0, 200)}: ${response.body}`);
      assert.ok(t.json(response).error.details.some((detail: { path: string }) => detail.path === field), `${path} names ${field}: ${response.body}`);
    }
    assert.deepEqual(await storedCounts(t), before);
    assert.equal((await post(t, "/v1/events/ecommerce/purchase", ecommerce({ salesChannel: { channelType: "" } }))).status, 200, "the reference's empty channel type");
    await t.stop();
  });

  it("needs the ecommerce:write scope on each route", async () => {
    const t = await startProfilesKit();
    const token = await tokenWith(t, ["events:write"]);
    for (const path of ["product-view", "add-to-cart", "purchase"]) {
      const response = await post(t, `/v1/events/ecommerce/${path}`, ecommerce(), token);
      assert.equal(response.status, 403, path);
      assert.match(t.json(response).error.message, /ecommerce:write/);
    }
    await t.stop();
  });
});
