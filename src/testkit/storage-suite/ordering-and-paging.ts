import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidCursorError, type Collection, type Doc, type FindOptions } from "../../ports/storage.ts";
import { ids, type Person, type WithStorage } from "./shared.ts";

export function orderingAndPagingTests(withStorage: WithStorage): void {
  describe("ordering", () => {
    it("sorts ascending with nulls and absent fields first, ties by id", () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        await people.upsertMany(AGES);
        const expected = ["n1", "n2", "n3", "t1", "t2", "x", "y"];
        assert.deepEqual(await ids(people.find({ orderBy: [{ field: "age" }] })), expected);
        assert.deepEqual(await ids(people.find({ orderBy: [{ field: "age", direction: "asc" }] })), expected);
      }));

    it("sorts descending with nulls last, still ties by id ascending", () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        await people.upsertMany(AGES);
        assert.deepEqual(
          await ids(people.find({ orderBy: [{ field: "age", direction: "desc" }] })),
          ["y", "x", "t1", "t2", "n1", "n2", "n3"],
        );
      }));

    it("sorts by several keys with mixed directions", () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        await people.upsertMany([
          { id: "1", team: "red", age: 1 },
          { id: "2", team: "blue", age: 2 },
          { id: "3", team: "red", age: 3 },
          { id: "4", age: 4 },
          { id: "5", team: "blue", age: 1 },
        ]);
        const orderBy = [
          { field: "team", direction: "desc" },
          { field: "age", direction: "asc" },
        ] as const;
        assert.deepEqual(await ids(people.find({ orderBy })), ["1", "3", "5", "2", "4"]);
        assert.deepEqual(await ids(people.find({ orderBy: [{ field: "id", direction: "desc" }] })), [
          "5",
          "4",
          "3",
          "2",
          "1",
        ]);
      }));

    it("orders across types like SQLite: null < numbers (booleans as 1/0) < text by code point", () =>
      withStorage(async (storage) => {
        const mixed = storage.collection<Mixed>("mixed");
        await mixed.upsertMany(MIXED);
        assert.deepEqual(await ids(mixed.find({ orderBy: [{ field: "v" }] })), MIXED_ASCENDING);
        assert.deepEqual(
          await ids(mixed.find({ orderBy: [{ field: "v", direction: "desc" }] })),
          [...MIXED_ASCENDING.slice(2).reverse(), "absent", "null"],
        );
        // Ranges use the same order: text is above every number.
        assert.deepEqual(await ids(mixed.find({ where: { v: { gte: "a" } }, orderBy: [{ field: "v" }] })), [
          "lower",
          "accent",
          "replacement",
          "emoji",
        ]);
        assert.deepEqual(await ids(mixed.find({ where: { v: { lt: 2 } }, orderBy: [{ field: "v" }] })), [
          "false",
          "true",
          "one-and-a-half",
        ]);
        assert.deepEqual(await ids(mixed.find({ where: { v: { gt: 1000 } }, orderBy: [{ field: "v" }] })), [
          "upper",
          "lower",
          "accent",
          "replacement",
          "emoji",
        ]);
      }));
  });

  describe("paging", () => {
    it("returns every row and no cursor without a limit", () =>
      withStorage(async (storage) => {
        const rows = storage.collection<Row>("rows");
        await rows.upsertMany(ROWS);
        const page = await rows.find();
        assert.equal(page.items.length, 25);
        assert.equal(page.nextCursor, undefined);
      }));

    it("returns a cursor exactly when more rows exist", () =>
      withStorage(async (storage) => {
        const rows = storage.collection<Row>("rows");
        await rows.upsertMany(ROWS.slice(0, 14));
        const first = await rows.find({ limit: 7 });
        assert.equal(first.items.length, 7);
        assert.equal(typeof first.nextCursor, "string");
        const second = await rows.find({ limit: 7, after: first.nextCursor });
        assert.equal(second.items.length, 7);
        assert.equal(second.nextCursor, undefined);
        const all = await rows.find({ limit: 14 });
        assert.equal(all.nextCursor, undefined);
      }));

    for (const orderBy of PAGING_ORDERS) {
      const label = orderBy.map((o) => `${o.field} ${o.direction ?? "asc"}`).join(", ") || "id only";
      it(`pages through 25 rows 7 at a time, each row once and in order (${label})`, () =>
        withStorage(async (storage) => {
          const rows = storage.collection<Row>("rows");
          await rows.upsertMany(ROWS);
          const expected = await ids(rows.find({ orderBy }));
          assert.equal(new Set(expected).size, 25);
          const { seen, pages } = await pageThrough(rows, { orderBy }, 7);
          assert.deepEqual(seen, expected);
          assert.equal(pages, 4);
        }));
    }

    it("pages with a where clause", () =>
      withStorage(async (storage) => {
        const rows = storage.collection<Row>("rows");
        await rows.upsertMany(ROWS);
        const options: FindOptions<Row> = {
          where: { score: { ne: 1 } },
          orderBy: [{ field: "score", direction: "desc" }, { field: "group" }],
        };
        const expected = await ids(rows.find(options));
        assert.ok(expected.length > 3);
        assert.deepEqual((await pageThrough(rows, options, 3)).seen, expected);
      }));

    it("rejects a malformed cursor", () =>
      withStorage(async (storage) => {
        const rows = storage.collection<Row>("rows");
        await rows.upsertMany(ROWS);
        const foreign = Buffer.from(JSON.stringify({ hello: "world" })).toString("base64url");
        for (const after of ["not a cursor!", "", "bm9wZQ", foreign]) {
          await assert.rejects(rows.find({ limit: 5, after }), InvalidCursorError, `cursor ${JSON.stringify(after)}`);
        }
        // A cursor from a different orderBy does not fit either.
        const { nextCursor } = await rows.find({ limit: 5, orderBy: [{ field: "score" }, { field: "group" }] });
        await assert.rejects(rows.find({ limit: 5, after: nextCursor }), InvalidCursorError);
      }));
  });
}

interface Mixed extends Doc {
  v?: string | number | boolean | null;
}

interface Row extends Doc {
  score?: number | null;
  group?: string;
  flag?: boolean;
}

const AGES: Person[] = [
  { id: "y", age: 40 },
  { id: "t2", age: 20 },
  { id: "n2" },
  { id: "x", age: 30 },
  { id: "t1", age: 20 },
  { id: "n3", age: null },
  { id: "n1" },
];

const MIXED: Mixed[] = [
  { id: "emoji", v: "\u{1F600}" },
  { id: "replacement", v: "\uFFFD" },
  { id: "lower", v: "b" },
  { id: "upper", v: "B" },
  { id: "accent", v: "\u00E9" },
  { id: "two", v: 2 },
  { id: "one-and-a-half", v: 1.5 },
  { id: "true", v: true },
  { id: "false", v: false },
  { id: "null", v: null },
  { id: "absent" },
];

/** "emoji" (U+1F600) sorts after U+FFFD by code point, although its UTF-16 units sort before. */
const MIXED_ASCENDING = [
  "absent",
  "null",
  "false",
  "true",
  "one-and-a-half",
  "two",
  "upper",
  "lower",
  "accent",
  "replacement",
  "emoji",
];

/** 25 rows with duplicate sort values, nulls, absent fields, and ids not in insertion order. */
const ROWS: Row[] = Array.from({ length: 25 }, (_, i) => {
  const row: Row = { id: `r${String((i * 7) % 25).padStart(2, "0")}`, flag: i % 2 === 0 };
  row.score = i % 4 === 0 ? null : i % 3;
  if (i % 5 !== 0) row.group = i % 2 === 0 ? "x" : "y";
  return row;
});

const PAGING_ORDERS: NonNullable<FindOptions<Row>["orderBy"]>[] = [
  [],
  [{ field: "score" }],
  [{ field: "score", direction: "desc" }],
  [{ field: "group", direction: "desc" }, { field: "score" }],
  [{ field: "score" }, { field: "group", direction: "desc" }],
  [{ field: "flag", direction: "desc" }, { field: "score", direction: "desc" }, { field: "group" }],
];

async function pageThrough<T extends Doc>(
  collection: Collection<T>,
  options: FindOptions<T>,
  limit: number,
): Promise<{ seen: string[]; pages: number }> {
  const seen: string[] = [];
  let pages = 0;
  let after: string | undefined;
  do {
    const page = await collection.find({ ...options, limit, after });
    pages++;
    seen.push(...page.items.map((item) => item.id));
    if (page.nextCursor !== undefined) assert.equal(page.items.length, limit);
    after = page.nextCursor;
  } while (after !== undefined && pages < 100);
  return { seen, pages };
}
