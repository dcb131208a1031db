import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Json } from "../../support/test-kit.ts";
import { ndjson, product, startCatalogKit, variant, type CatalogTestKit } from "./support.ts";

/** A clean line, a line still checked after the bad one: every case ends with it. */
const LATER_PROBLEM = JSON.stringify(product("later", { name: 5 }));
const laterProblem = (lineNum: number) => ({ errorType: "INVALID_TYPE", errorMessage: "name must be a string, not a number", lineNum });

interface BadFileCase {
  name: string;
  file: string | Buffer;
  errors: Json[];
  received: number;
  processed: number;
}

const utf8 = (text: string) => Buffer.from(text, "utf8");

const cases: BadFileCase[] = [
  {
    name: "a byte-order mark before the first line is dropped, not an error",
    file: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8(ndjson(product("p1"), LATER_PROBLEM))]),
    errors: [laterProblem(2)],
    received: 2,
    processed: 1,
  },
  {
    name: "CRLF line endings are read as line ends",
    file: `${JSON.stringify(product("p1"))}\r\n${JSON.stringify(product("p2"))}\r\n${LATER_PROBLEM}\r\n`,
    errors: [laterProblem(3)],
    received: 3,
    processed: 2,
  },
  {
    name: "an empty line is skipped and still counted for line numbers",
    file: `${JSON.stringify(product("p1"))}\n\n   \n${LATER_PROBLEM}\n`,
    errors: [laterProblem(4)],
    received: 2,
    processed: 1,
  },
  {
    name: "a 5 MiB line is LINE_TOO_LONG on its line",
    file: ndjson(product("p1"), product("huge", { description: "x".repeat(5 * 1024 * 1024) }), LATER_PROBLEM),
    errors: [
      { errorType: "LINE_TOO_LONG", errorMessage: /^the line is 52\d{5} bytes long; at most 4194304 are allowed$/, lineNum: 2 },
      laterProblem(3),
    ],
    received: 3,
    processed: 1,
  },
  {
    name: "invalid UTF-8 is an error on its line only",
    file: Buffer.concat([utf8(`${JSON.stringify(product("p1"))}\n`), Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x7d, 0x0a]), utf8(`${LATER_PROBLEM}\n`)]),
    errors: [{ errorType: "INVALID_JSON", errorMessage: "the line is not valid UTF-8", lineNum: 2 }, laterProblem(3)],
    received: 3,
    processed: 1,
  },
  {
    name: "a line that is a JSON array is INVALID_TYPE",
    file: ndjson(product("p1"), [product("p2")], LATER_PROBLEM),
    errors: [{ errorType: "INVALID_TYPE", errorMessage: "a line must be a JSON object (one product), not an array", lineNum: 2 }, laterProblem(3)],
    received: 3,
    processed: 1,
  },
  {
    name: "a truncated last line is INVALID_JSON, and what came before is kept",
    file: `${JSON.stringify(product("p1"))}\n${LATER_PROBLEM}\n${JSON.stringify(product("p3")).slice(0, 40)}`,
    errors: [laterProblem(2), { errorType: "INVALID_JSON", errorMessage: /^the line is not valid JSON: /, lineNum: 3 }],
    received: 3,
    processed: 1,
  },
  {
    name: "a duplicate product id on lines 3 and 7 is DUPLICATE_ID on line 7",
    file: ndjson(product("a"), product("b"), product("dup", { name: "first" }), product("c"), product("d"), product("e"), product("dup", { name: "second" }), LATER_PROBLEM),
    errors: [{ errorType: "DUPLICATE_ID", errorMessage: 'id "dup" is already used by the product on line 3', lineNum: 7 }, laterProblem(8)],
    received: 8,
    processed: 6,
  },
  {
    name: "a variant with prices: [] is INVALID_VALUE",
    file: ndjson(product("p1"), product("p2", { variants: [variant({ id: "v", prices: [] })] }), LATER_PROBLEM),
    errors: [{ errorType: "INVALID_VALUE", errorMessage: "variants[0].prices needs at least one price", lineNum: 2 }, laterProblem(3)],
    received: 3,
    processed: 1,
  },
  {
    name: 'link: "javascript:alert(1)" is INVALID_VALUE',
    file: ndjson(product("p1"), product("p2", { link: "javascript:alert(1)" }), LATER_PROBLEM),
    errors: [{ errorType: "INVALID_VALUE", errorMessage: "link must be an http(s) URL", lineNum: 2 }, laterProblem(3)],
    received: 3,
    processed: 1,
  },
  {
    name: "11 categories is TOO_MANY",
    file: ndjson(product("p1"), product("p2", { categories: Array.from({ length: 11 }, (_, i) => `c${i}`) }), LATER_PROBLEM),
    errors: [{ errorType: "TOO_MANY", errorMessage: "categories has 11 entries; at most 10 are allowed", lineNum: 2 }, laterProblem(3)],
    received: 3,
    processed: 1,
  },
  {
    name: "a 257-character name is TOO_LONG",
    file: ndjson(product("p1"), product("p2", { name: "n".repeat(257) }), LATER_PROBLEM),
    errors: [{ errorType: "TOO_LONG", errorMessage: "name is 257 characters long; at most 256 are allowed", lineNum: 2 }, laterProblem(3)],
    received: 3,
    processed: 1,
  },
  {
    name: 'lastUpdated: "yesterday" is INVALID_VALUE',
    file: ndjson(product("p1"), product("p2", { lastUpdated: "yesterday" }), LATER_PROBLEM),
    errors: [
      { errorType: "INVALID_VALUE", errorMessage: "lastUpdated must be an ISO 8601 date-time with a UTC offset, such as 2026-03-01T12:00:00Z", lineNum: 2 },
      laterProblem(3),
    ],
    received: 3,
    processed: 1,
  },
];

describe("bad files: each problem is an error entry on its line, and the rest of the file is still checked", () => {
  let t: CatalogTestKit;
  before(async () => (t = await startCatalogKit()));
  after(() => t.stop());

  for (const bad of cases) {
    it(bad.name, async () => {
      const done = await t.upload(bad.file);
      assert.equal(done.status, "completed");
      assert.equal(done.errors.length, bad.errors.length, JSON.stringify(done.errors));
      bad.errors.forEach((expected, index) => {
        const actual = done.errors[index];
        assert.equal(actual.errorType, expected.errorType);
        assert.equal(actual.lineNum, expected.lineNum);
        if (expected.errorMessage instanceof RegExp) assert.match(actual.errorMessage, expected.errorMessage);
        else assert.equal(actual.errorMessage, expected.errorMessage);
      });
      assert.equal(done.productsReceived, bad.received);
      assert.equal(done.productsProcessed, bad.processed);
    });
  }

  it("keeps the first line's product on a duplicate id, not the later one", async () => {
    const dup = await t.kit.plugin("catalog").getProduct(t.company.companyId, "dup");
    assert.equal(dup?.name, "first");
  });

  it("caps the list at 10 entries per errorType while the counts stay exact", async () => {
    const lines = [
      ...Array.from({ length: 25 }, () => "{not json"),
      ...Array.from({ length: 3 }, (_, i) => product(`long-${i}`, { name: "n".repeat(300) })),
      product("fine"),
    ];
    const done = await t.upload(ndjson(...lines));
    assert.equal(done.productsReceived, 29);
    assert.equal(done.productsProcessed, 1);
    const byType = (type: string) => done.errors.filter((error: Json) => error.errorType === type);
    assert.equal(byType("INVALID_JSON").length, 10);
    assert.deepEqual(
      byType("INVALID_JSON").map((error: Json) => error.lineNum),
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    );
    assert.deepEqual(
      byType("TOO_LONG").map((error: Json) => error.lineNum),
      [26, 27, 28],
    );
    const counts = (await t.kit.plugin("catalog").getUpload(t.company.companyId, done.uploadId))?.errorCounts;
    assert.deepEqual(counts, { INVALID_JSON: 25, TOO_LONG: 3 });
  });

  it("reports several problems of one line as several entries", async () => {
    const done = await t.upload(ndjson({ id: "x".repeat(300), link: "ftp://example.com", variants: [] }));
    assert.deepEqual(
      done.errors.map((error: Json) => [error.errorType, error.errorMessage, error.lineNum]),
      [
        ["TOO_LONG", "id is 300 characters long; at most 256 are allowed", 1],
        ["MISSING_FIELD", "name is required", 1],
        ["INVALID_VALUE", "link must be an http(s) URL", 1],
        ["MISSING_FIELD", "lastUpdated is required", 1],
        ["INVALID_VALUE", "variants needs at least one variant", 1],
      ],
    );
  });
});
