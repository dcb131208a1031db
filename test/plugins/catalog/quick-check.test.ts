import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import * as v from "valibot";
import { createFieldChecks, createProductSchema } from "../../../plugins/catalog/product-schema.ts";
import { createQuickCheck } from "../../../plugins/catalog/quick-check.ts";

// The quick check must answer exactly what valibot's schema answers: the same product for a
// line that passes every rule, nothing for a line that breaks one (valibot then describes it).
const checks = createFieldChecks();
const schema = createProductSchema(checks);
const quickCheck = createQuickCheck(checks);

const long = (length: number) => "x".repeat(length);
const link = (length: number) => `https://a.example/${long(length - 18)}`;
/** Values at and past every limit, of every JSON type. */
const scalar = fc.constantFrom<unknown>(
  "",
  "a",
  long(64),
  long(65),
  long(256),
  long(257),
  long(512),
  long(513),
  long(1024),
  long(1025),
  "https://shop.example.com/p/1",
  link(2048),
  link(2049),
  "javascript:alert(1)",
  "https:// spaces.example",
  "2026-02-14T09:30:00Z",
  "2026-02-14T09:30:00+05:30",
  "2026-02-30T10:00:00Z",
  "2026-02-01T10:00:00",
  "USD",
  "usd",
  "XYZ",
  "19.99",
  "1,50",
  0,
  1,
  -1,
  1.5,
  true,
  false,
  null,
);
/** A product using every field, each value valid. */
const rich = {
  id: "p1",
  name: "Linen shirt",
  description: "A shirt.",
  brand: "Example Goods",
  link: "https://shop.example.com/p/1",
  lastUpdated: "2026-02-14T09:30:00Z",
  categories: ["shirt"],
  tags: ["linen", "sand"],
  productOptions: [{ name: "Size", position: 0, values: ["S", "M"] }],
  images: [{ src: "https://cdn.example.com/p1.jpg", alt: "front", width: 1200, height: 1600, variantIds: ["v1"], position: 1 }],
  attributes: [{ name: "material", value: "linen" }],
  collections: ["summer"],
  variants: [
    {
      id: "v1",
      name: "Linen shirt S",
      position: 0,
      link: "https://shop.example.com/p/1?size=s",
      prices: [{ currencyCode: "USD", amount: "19.99", compareAtPrice: "25.00" }],
      availableForPurchase: true,
      inventoryQuantity: 4,
      productOptionValues: [{ productOptionName: "Size", value: "S" }],
      attributes: [{ name: "fit", value: "slim" }],
      lastUpdated: "2026-02-14T09:30:00+01:00",
    },
  ],
};

type Json = Record<string, unknown> | unknown[];

/** Every place in `value` a mutation can reach: its objects and arrays, with a key of each. */
function places(value: unknown, found: Array<{ holder: Json; key: string | number }> = []) {
  if (Array.isArray(value)) value.forEach((item, index) => (found.push({ holder: value, key: index }), places(item, found)));
  else if (typeof value === "object" && value !== null) for (const [key, item] of Object.entries(value)) found.push({ holder: value as Json, key }), places(item, found);
  return found;
}

/** One change to a valid product: a value replaced, a field dropped, an unknown field added, or a list grown to around a limit. */
const mutation = fc.record({
  place: fc.nat(),
  change: fc.oneof(
    fc.record({ kind: fc.constant("replace" as const), value: scalar }),
    fc.record({ kind: fc.constant("drop" as const) }),
    fc.record({ kind: fc.constant("unknown" as const) }),
    fc.record({ kind: fc.constant("grow" as const), length: fc.constantFrom(0, 10, 11, 20, 21, 50, 51, 100, 101, 250, 251) }),
  ),
});

function mutate({ place, change }: { place: number; change: { kind: string; value?: unknown; length?: number } }) {
  const product = structuredClone(rich) as Record<string, unknown>;
  const all = places(product);
  const { holder, key } = all[place % all.length]!;
  const target = (holder as Record<string | number, unknown>)[key];
  if (change.kind === "replace") (holder as Record<string | number, unknown>)[key] = change.value;
  else if (change.kind === "drop") delete (holder as Record<string | number, unknown>)[key];
  else if (change.kind === "unknown" && typeof target === "object" && target !== null && !Array.isArray(target)) (target as Record<string, unknown>).somethingElse = 1;
  else if (change.kind === "grow" && Array.isArray(target)) (holder as Record<string | number, unknown>)[key] = Array.from({ length: change.length! }, () => target[0]);
  return product;
}

describe("the quick check of catalog lines", () => {
  it("answers what valibot's schema answers, for valid and invalid products alike", () => {
    fc.assert(
      fc.property(mutation, (change) => {
        // Through JSON, as a line arrives.
        const parsed = JSON.parse(JSON.stringify(mutate(change))) as Record<string, unknown>;
        const result = v.safeParse(schema, parsed, { abortEarly: false });
        assert.deepStrictEqual(quickCheck(parsed), result.success ? result.output : undefined);
      }),
      { numRuns: 2000, seed: 20261121 },
    );
  });

  it("keeps a product with no unknown field as it is, and copies one with unknown fields", () => {
    const valid = { id: "p", name: "n", link: "https://a.example", lastUpdated: "2026-02-14T09:30:00Z", variants: [{ id: "v", name: "n", link: "https://a.example", prices: [{ currencyCode: "USD", amount: "1" }], availableForPurchase: true, lastUpdated: "2026-02-14T09:30:00Z" }] };
    assert.equal(quickCheck(valid), valid);
    const withExtra = { ...valid, variants: [{ ...valid.variants[0], extra: 1 }] };
    const checked = quickCheck(withExtra);
    assert.notEqual(checked, withExtra);
    assert.deepStrictEqual(checked, valid);
  });
});
