import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { JsonText, type Collection, type Doc } from "../../ports/storage.ts";
import { rejection, type WithStorage } from "./shared.ts";

/** "rows" (shared.ts): `score` and `group` indexed, `note` read alone, `label` neither. */
interface Row extends Doc {
  score?: number;
  group?: string;
  note?: string;
  label?: string;
}

const ROWS: Row[] = [
  { id: "r1", group: "g", score: 3, note: "three", label: "c" },
  { id: "r2", group: "g", score: -1.5, note: "", label: "a" },
  { id: "r3", group: "g", score: 3, label: "b" },
  { id: "r4", group: "h", score: 7, note: "naïve \u{1F600} \"quoted\"" },
  { id: "r5", group: "g", note: "no score" },
  { id: "r6", group: "h", score: 2 ** 60, note: "a long one ".repeat(40) },
];

/** What `fields` of `doc` hold, absent ones left out: what findFields must answer at least. */
function named(doc: object, fields: readonly string[]): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const field of ["id", ...fields]) if (Object.hasOwn(doc, field)) picked[field] = (doc as Record<string, unknown>)[field];
  return picked;
}

/** Every page of `findFields(fields, options)`, followed through its cursors: each item's named fields. */
async function allPages(rows: Collection<Row>, fields: ReadonlyArray<"score" | "group" | "note" | "label">, options: Parameters<Collection<Row>["find"]>[0] = {}): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = [];
  let after: string | undefined;
  do {
    const page = await rows.findFields(fields, { ...options, after });
    for (const item of page.items) items.push(named(item, fields));
    after = page.nextCursor;
  } while (after !== undefined);
  return items;
}

export function findFieldsTests(withStorage: WithStorage): void {
  describe("findFields", () => {
    it("answers the named fields of each item as find would, in its order and pages, from columns or from documents", () =>
      withStorage(async (storage) => {
        const rows = storage.collection<Row>("rows");
        await rows.upsertMany(ROWS);
        const cases = [
          { fields: ["note", "score"] as const, options: { where: { group: "g" }, orderBy: [{ field: "score", direction: "desc" }] as const, limit: 2 } },
          { fields: ["note"] as const, options: { orderBy: [{ field: "id", direction: "desc" }] as const, limit: 3 } },
          // `label` has no column anywhere, and the sort field `group` is not named: read from documents where that matters.
          { fields: ["note", "label"] as const, options: { where: { score: { gte: 0 } }, orderBy: [{ field: "group" }] as const, limit: 1 } },
          { fields: ["group", "note", "score"] as const, options: {} },
        ];
        for (const { fields, options } of cases) {
          const expected = (await rows.find(options.limit === undefined ? options : { ...options, limit: 100 })).items.map((doc) => named(doc, fields));
          assert.deepEqual(await allPages(rows, fields, options), expected, `fields ${fields.join(", ")}`);
        }
      }));

    it("answers what every kind of write left in a field read alone, a removed one absent", () =>
      withStorage(async (storage) => {
        const rows = storage.collection<Row>("rows");
        await rows.insert({ id: "a", note: "inserted" });
        await rows.upsert({ id: "b", note: "upserted" });
        await rows.upsertMany([{ id: "c", note: new JsonText('"from json text"') }, { id: "d", note: "to remove", score: 1 }, { id: "e", group: "x" }, { id: "f" }]);
        await rows.upsert({ id: "b", note: "upserted again" });
        await rows.update("a", { note: "updated" });
        await rows.update("d", { note: undefined });
        await rows.updateWhere({ group: "x" }, { note: "updated where" });
        await rows.updateEach([{ id: "f", patch: { note: "updated each" } }]);
        await rows.updateEach([{ id: "c", patch: { note: "updated beside another" } }, { id: "e", patch: { label: "e" } }]);
        const stored = (await rows.find()).items.map((doc) => named(doc, ["note"]));
        assert.deepEqual(stored, [
          { id: "a", note: "updated" },
          { id: "b", note: "upserted again" },
          { id: "c", note: "updated beside another" },
          { id: "d" },
          { id: "e", note: "updated where" },
          { id: "f", note: "updated each" },
        ]);
        assert.deepEqual(await allPages(rows, ["note"]), stored);
      }));

    it("refuses fields that are not a non-empty list of field names", () =>
      withStorage(async (storage) => {
        const rows = storage.collection<Row>("rows");
        assert.ok((await rejection(rows.findFields([]))) instanceof TypeError);
        assert.ok((await rejection(rows.findFields("note" as unknown as ["note"]))) instanceof TypeError);
        assert.match(String(await rejection(rows.findFields(["no such field" as "note"]))), /invalid field name/);
      }));
  });
}
