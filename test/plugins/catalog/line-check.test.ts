import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LineChecker } from "../../../plugins/catalog/line-check.ts";
import { LineSplitter, type RawLine } from "../../../plugins/catalog/read-lines.ts";
import type { Json } from "../../support/test-kit.ts";
import { product, variant } from "./support.ts";

// JSON.parse's messages in every case: this checker never screens lines (see the screening test).
const checker = new LineChecker(Infinity);
const check = (value: unknown) => checker.check(Buffer.from(typeof value === "string" ? value : JSON.stringify(value)));
const problemsOf = (value: unknown) => {
  const outcome = check(value);
  return outcome.kind === "problems" ? outcome.problems.map((problem) => `${problem.errorType}: ${problem.errorMessage}`) : [];
};
const list = (count: number, make: (index: number) => unknown) => Array.from({ length: count }, (_, index) => make(index));
const withVariant = (fields: Json) => product("p", { variants: [variant({ id: "v", ...fields })] });

/** One limit of interface §2.7: the product at the limit passes, one past it fails with `problem`. */
interface LimitCase {
  field: string;
  atLimit: Json;
  pastLimit: Json;
  problem: string;
}

const limits: LimitCase[] = [
  {
    field: "id",
    atLimit: product("i".repeat(256), { name: "n", variants: [variant({ id: "v" })] }),
    pastLimit: product("i".repeat(257), { name: "n", variants: [variant({ id: "v" })] }),
    problem: "TOO_LONG: id is 257 characters long; at most 256 are allowed",
  },
  { field: "name", atLimit: product("p", { name: "n".repeat(256) }), pastLimit: product("p", { name: "n".repeat(257) }), problem: "TOO_LONG: name is 257 characters long; at most 256 are allowed" },
  {
    field: "description",
    atLimit: product("p", { description: "d".repeat(1024) }),
    pastLimit: product("p", { description: "d".repeat(1025) }),
    problem: "TOO_LONG: description is 1025 characters long; at most 1024 are allowed",
  },
  { field: "brand", atLimit: product("p", { brand: "b".repeat(256) }), pastLimit: product("p", { brand: "b".repeat(257) }), problem: "TOO_LONG: brand is 257 characters long; at most 256 are allowed" },
  {
    field: "link",
    atLimit: product("p", { link: `https://a.example/${"l".repeat(2048 - 18)}` }),
    pastLimit: product("p", { link: `https://a.example/${"l".repeat(2049 - 18)}` }),
    problem: "TOO_LONG: link is 2049 characters long; at most 2048 are allowed",
  },
  {
    field: "categories",
    atLimit: product("p", { categories: list(10, () => "c".repeat(64)) }),
    pastLimit: product("p", { categories: list(10, (i) => (i === 9 ? "c".repeat(65) : "c")) }),
    problem: "TOO_LONG: categories[9] is 65 characters long; at most 64 are allowed",
  },
  {
    field: "tags",
    atLimit: product("p", { tags: list(50, () => "t".repeat(64)) }),
    pastLimit: product("p", { tags: list(51, () => "t") }),
    problem: "TOO_MANY: tags has 51 entries; at most 50 are allowed",
  },
  {
    field: "tag length",
    atLimit: product("p", { tags: ["t".repeat(64)] }),
    pastLimit: product("p", { tags: ["t".repeat(65)] }),
    problem: "TOO_LONG: tags[0] is 65 characters long; at most 64 are allowed",
  },
  {
    field: "productOptions",
    atLimit: product("p", { productOptions: list(10, (i) => ({ name: `o${i}`, position: i, values: ["a"] })) }),
    pastLimit: product("p", { productOptions: list(11, (i) => ({ name: `o${i}`, position: i, values: ["a"] })) }),
    problem: "TOO_MANY: productOptions has 11 entries; at most 10 are allowed",
  },
  {
    field: "option name",
    atLimit: product("p", { productOptions: [{ name: "o".repeat(256), position: 0, values: [] }] }),
    pastLimit: product("p", { productOptions: [{ name: "o".repeat(257), position: 0, values: [] }] }),
    problem: "TOO_LONG: productOptions[0].name is 257 characters long; at most 256 are allowed",
  },
  {
    field: "option values",
    atLimit: product("p", { productOptions: [{ name: "Size", position: 0, values: list(100, (i) => `${i}`) }] }),
    pastLimit: product("p", { productOptions: [{ name: "Size", position: 0, values: list(101, (i) => `${i}`) }] }),
    problem: "TOO_MANY: productOptions[0].values has 101 entries; at most 100 are allowed",
  },
  {
    field: "option value length",
    atLimit: product("p", { productOptions: [{ name: "Size", position: 0, values: ["v".repeat(256)] }] }),
    pastLimit: product("p", { productOptions: [{ name: "Size", position: 0, values: ["v".repeat(257)] }] }),
    problem: "TOO_LONG: productOptions[0].values[0] is 257 characters long; at most 256 are allowed",
  },
  {
    field: "images",
    atLimit: product("p", { images: list(250, (i) => ({ src: `https://cdn.example/${i}.jpg` })) }),
    pastLimit: product("p", { images: list(251, (i) => ({ src: `https://cdn.example/${i}.jpg` })) }),
    problem: "TOO_MANY: images has 251 entries; at most 250 are allowed",
  },
  {
    field: "image alt",
    atLimit: product("p", { images: [{ src: "https://cdn.example/a.jpg", alt: "a".repeat(512) }] }),
    pastLimit: product("p", { images: [{ src: "https://cdn.example/a.jpg", alt: "a".repeat(513) }] }),
    problem: "TOO_LONG: images[0].alt is 513 characters long; at most 512 are allowed",
  },
  {
    field: "attributes",
    atLimit: product("p", { attributes: list(100, (i) => ({ name: "n".repeat(64), value: `${i}`.padEnd(256, "v") })) }),
    pastLimit: product("p", { attributes: list(101, () => ({ name: "n", value: "v" })) }),
    problem: "TOO_MANY: attributes has 101 entries; at most 100 are allowed",
  },
  {
    field: "attribute name",
    atLimit: product("p", { attributes: [{ name: "n".repeat(64), value: "v" }] }),
    pastLimit: product("p", { attributes: [{ name: "n".repeat(65), value: "v" }] }),
    problem: "TOO_LONG: attributes[0].name is 65 characters long; at most 64 are allowed",
  },
  {
    field: "attribute value",
    atLimit: product("p", { attributes: [{ name: "n", value: "v".repeat(256) }] }),
    pastLimit: product("p", { attributes: [{ name: "n", value: "v".repeat(257) }] }),
    problem: "TOO_LONG: attributes[0].value is 257 characters long; at most 256 are allowed",
  },
  {
    field: "variants",
    atLimit: product("p", { variants: list(100, (i) => variant({ id: `v${i}` })) }),
    pastLimit: product("p", { variants: list(101, (i) => variant({ id: `v${i}` })) }),
    problem: "TOO_MANY: variants has 101 entries; at most 100 are allowed",
  },
  {
    field: "collections",
    atLimit: product("p", { collections: list(20, (i) => `c${i}`) }),
    pastLimit: product("p", { collections: list(21, (i) => `c${i}`) }),
    problem: "TOO_MANY: collections has 21 entries; at most 20 are allowed",
  },
  {
    field: "variant id",
    atLimit: withVariant({ id: "v".repeat(256), name: "n" }),
    pastLimit: withVariant({ id: "v".repeat(257), name: "n" }),
    problem: "TOO_LONG: variants[0].id is 257 characters long; at most 256 are allowed",
  },
  {
    field: "variant name",
    atLimit: withVariant({ name: "n".repeat(256) }),
    pastLimit: withVariant({ name: "n".repeat(257) }),
    problem: "TOO_LONG: variants[0].name is 257 characters long; at most 256 are allowed",
  },
  {
    field: "variant attributes",
    atLimit: withVariant({ attributes: list(100, () => ({ name: "n", value: "v" })) }),
    pastLimit: withVariant({ attributes: list(101, () => ({ name: "n", value: "v" })) }),
    problem: "TOO_MANY: variants[0].attributes has 101 entries; at most 100 are allowed",
  },
  {
    field: "variant position",
    atLimit: withVariant({ position: 0 }),
    pastLimit: withVariant({ position: -1 }),
    problem: "INVALID_VALUE: variants[0].position must be 0 or more",
  },
  {
    field: "option position",
    atLimit: product("p", { productOptions: [{ name: "Size", position: 0, values: [] }] }),
    pastLimit: product("p", { productOptions: [{ name: "Size", position: 1.5, values: [] }] }),
    problem: "INVALID_VALUE: productOptions[0].position must be a whole number",
  },
];

/** One more rule: a valid product becomes `value`, which has exactly `problems`. */
interface RuleCase {
  rule: string;
  value: unknown;
  problems: string[];
}

const rules: RuleCase[] = [
  {
    rule: "required product fields",
    value: { variants: [variant({ id: "v" })] },
    problems: ["MISSING_FIELD: id is required", "MISSING_FIELD: name is required", "MISSING_FIELD: link is required", "MISSING_FIELD: lastUpdated is required"],
  },
  { rule: "variants are required", value: { ...product("p"), variants: undefined }, problems: ["MISSING_FIELD: variants is required"] },
  { rule: "a product needs at least one variant", value: product("p", { variants: [] }), problems: ["INVALID_VALUE: variants needs at least one variant"] },
  {
    rule: "required variant fields",
    value: product("p", { variants: [{ id: "v" }] }),
    problems: [
      "MISSING_FIELD: variants[0].name is required",
      "MISSING_FIELD: variants[0].link is required",
      "MISSING_FIELD: variants[0].prices is required",
      "MISSING_FIELD: variants[0].availableForPurchase is required",
      "MISSING_FIELD: variants[0].lastUpdated is required",
    ],
  },
  {
    rule: "wrong types are INVALID_TYPE",
    value: product("p", { tags: "sale", variants: [variant({ id: "v", available: "yes" as unknown as boolean, inventory: "3" as unknown as number })] }),
    problems: [
      "INVALID_TYPE: tags must be an array, not a string",
      "INVALID_TYPE: variants[0].availableForPurchase must be true or false, not a string",
      "INVALID_TYPE: variants[0].inventoryQuantity must be a number, not a string",
    ],
  },
  { rule: "null is not a string", value: product("p", { description: null }), problems: ["INVALID_TYPE: description must be a string, not null"] },
  { rule: "an array where an object belongs", value: product("p", { variants: [[1, 2]] }), problems: ["INVALID_TYPE: variants[0] must be an object, not an array"] },
  { rule: "an empty id", value: product(""), problems: ["INVALID_VALUE: id must not be empty"] },
  {
    rule: "links are http(s) URLs",
    value: product("p", { link: "www.example.com", images: [{ src: "data:image/png;base64,AAA" }], variants: [variant({ id: "v", link: "https:// spaces.example" })] }),
    problems: ["INVALID_VALUE: link must be an http(s) URL", "INVALID_VALUE: images[0].src must be an http(s) URL", "INVALID_VALUE: variants[0].link must be an http(s) URL"],
  },
  {
    rule: "timestamps are ISO 8601 with an offset and a real date",
    value: product("p", { lastUpdated: "2026-02-30T10:00:00Z", variants: [variant({ id: "v", lastUpdated: "2026-02-01T10:00:00" })] }),
    problems: [
      "INVALID_VALUE: lastUpdated must be an ISO 8601 date-time with a UTC offset, such as 2026-03-01T12:00:00Z",
      "INVALID_VALUE: variants[0].lastUpdated must be an ISO 8601 date-time with a UTC offset, such as 2026-03-01T12:00:00Z",
    ],
  },
  {
    rule: "currency codes are ISO 4217, amounts decimal strings",
    value: product("p", { variants: [variant({ id: "v", prices: [{ currencyCode: "XYZ", amount: "1,50" }, { currencyCode: "usd", amount: 12, compareAtPrice: "abc" }] })] }),
    problems: [
      "INVALID_VALUE: variants[0].prices[0].currencyCode must be a three-letter ISO 4217 currency code, such as USD",
      'INVALID_VALUE: variants[0].prices[0].amount must be a decimal amount such as "19.99"',
      "INVALID_VALUE: variants[0].prices[1].currencyCode must be a three-letter ISO 4217 currency code, such as USD",
      "INVALID_TYPE: variants[0].prices[1].amount must be a string, not a number",
      'INVALID_VALUE: variants[0].prices[1].compareAtPrice must be a decimal amount such as "19.99"',
    ],
  },
  {
    rule: "variant ids are unique within a product",
    value: product("p", { variants: [variant({ id: "v" }), variant({ id: "w" }), variant({ id: "v" })] }),
    problems: ['DUPLICATE_ID: variants[2].id "v" repeats variants[0].id'],
  },
  {
    rule: "image variantIds name variants of the same product",
    value: product("p", { images: [{ src: "https://cdn.example/a.jpg", variantIds: ["p-v1", "other-v1"] }] }),
    problems: ['INVALID_VALUE: images[0].variantIds[1] "other-v1" is not the id of a variant of this product'],
  },
  { rule: "a line that is not an object", value: "42", problems: ["INVALID_TYPE: a line must be a JSON object (one product), not a number"] },
];

describe("catalog line checks (interface §2.7)", () => {
  for (const limit of limits) {
    it(`${limit.field}: passes at the limit, fails one past it`, () => {
      assert.deepEqual(problemsOf(limit.atLimit), []);
      assert.deepEqual(problemsOf(limit.pastLimit), [limit.problem]);
    });
  }

  for (const rule of rules) {
    it(rule.rule, () => assert.deepEqual(problemsOf(rule.value), rule.problems));
  }

  it("drops unknown fields and keeps every known one", () => {
    const full = product("p", {
      description: "d",
      brand: "b",
      categories: ["c"],
      tags: ["t"],
      productOptions: [{ name: "Size", position: 0, values: ["S"], extra: 1 }],
      images: [{ src: "https://cdn.example/a.jpg", alt: "a", width: 10, height: 20, variantIds: ["v"], position: 1 }],
      attributes: [{ name: "n", value: "v" }],
      collections: ["summer"],
      variants: [variant({ id: "v", position: 0, inventory: -2, productOptionValues: [{ productOptionName: "Size", value: "S" }], attributes: [{ name: "n", value: "v" }] })],
      somethingElse: { nested: true },
    });
    const outcome = check(full);
    assert.equal(outcome.kind, "product");
    const saved = outcome.kind === "product" ? (outcome.product as Json) : undefined;
    const { somethingElse: _unknown, ...known } = full;
    known.productOptions = [{ name: "Size", position: 0, values: ["S"] }];
    assert.deepEqual(saved, known);
  });

  it("treats a line of white space as blank", () => assert.equal(check("  \t ").kind, "blank"));

  it("screens lines without JSON.parse once as many failed to parse as an upload keeps messages for", () => {
    const screening = new LineChecker(2);
    const outcome = (line: string) => {
      const checked = screening.check(Buffer.from(line));
      return checked.kind === "problems" ? checked.problems.map((problem) => `${problem.errorType}: ${problem.errorMessage}`) : checked.kind;
    };
    assert.deepEqual(outcome("x"), [`INVALID_JSON: the line is not valid JSON: Unexpected token 'x', "x" is not valid JSON`]);
    assert.equal(outcome(JSON.stringify(product("p1"))), "product");
    assert.match(outcome("{")[0]!, /^INVALID_JSON: the line is not valid JSON: ./);
    assert.deepEqual(outcome("x"), ["INVALID_JSON: the line is not valid JSON"]);
    assert.deepEqual(outcome("{"), ["INVALID_JSON: the line is not valid JSON"]);
    assert.equal(outcome(JSON.stringify(product("p2"))), "product");
    assert.deepEqual(outcome("[1]"), ["INVALID_TYPE: a line must be a JSON object (one product), not an array"]);
  });
});

describe("line splitting", () => {
  const split = (chunks: string[], max = 100) => {
    const splitter = new LineSplitter(max);
    const lines: RawLine[] = [];
    for (const chunk of chunks) lines.push(...splitter.push(Buffer.from(chunk, "latin1")));
    lines.push(...splitter.end());
    return lines.map((line) => {
      if (line.kind === "too long") return `${line.lineNum}:too long (${line.length})`;
      return line.kind === "empty" ? `${line.lineNum}:${line.count} empty` : `${line.lineNum}:${line.bytes.toString("latin1")}`;
    });
  };

  it("numbers lines from 1, across chunk boundaries, with CRLF split between chunks", () => {
    assert.deepEqual(split(["ab\r", "\ncd\n", "e", "f\r\n\ng"]), ["1:ab", "2:cd", "3:ef", "4:1 empty", "5:g"]);
  });

  it("gives a run of empty lines (LF or CRLF) as one piece, so 100,000 of them are not 100,000 objects", () => {
    assert.deepEqual(split(["a\n\n\r\n\nb\n", "\n".repeat(100_000), "\r\n\nc"]), ["1:a", "2:3 empty", "5:b", "6:100000 empty", "100006:2 empty", "100008:c"]);
    // A CR that ends its chunk may begin a CRLF: that line is read whole, as any line split between chunks.
    assert.deepEqual(split(["\n\r", "\n\n"]), ["1:1 empty", "2:", "3:1 empty"]);
    assert.deepEqual(split(["\n \n\n"]), ["1:1 empty", "2: ", "3:1 empty"]);
  });

  it("drops a byte-order mark only at the start of the file, even split across chunks", () => {
    assert.deepEqual(split(["\xef\xbb", "\xbfa\n\xef\xbb\xbfb\n"]), ["1:a", "2:\xef\xbb\xbfb"]);
  });

  it("reports a line past the limit with its length, without keeping it, and goes on", () => {
    assert.deepEqual(split(["0123456789", "0123456789", "01\nok\n"], 15), ["1:too long (22)", "2:ok"]);
    assert.deepEqual(split(["0123456789012345\nok"], 15), ["1:too long (16)", "2:ok"]);
  });

  it("keeps a last line without a newline, and adds none for a file that ends with one", () => {
    assert.deepEqual(split(["a\nb"]), ["1:a", "2:b"]);
    assert.deepEqual(split(["a\n"]), ["1:a"]);
    assert.deepEqual(split([]), []);
  });
});
