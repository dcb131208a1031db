import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import Database from "better-sqlite3";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import type { Doc } from "../../../src/ports/storage.ts";
import { statementsOf } from "../../support/sqlite-statements.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";

interface Delivery extends Doc {
  hook: string;
  body: string;
  createdAt: number;
  event?: string;
}

const directory = temporaryDirectory("sqlite-fields-read-alone");
let files = 0;
const newFile = () => join(directory, `db-${++files}.sqlite`);

const DELIVERIES = { name: "deliveries", indexes: [{ fields: ["hook"] }, { fields: ["createdAt"] }], largeDocuments: true };
const delivery = (n: number): Delivery => ({ id: `d${n}`, hook: "h", body: JSON.stringify({ n, text: "\"quoted\" \u{1F600}" }), createdAt: 1000 + n, event: "e" });

describe("sqliteStorage fields read alone", () => {
  it("findFields reads indexed fields and fields read alone from their columns, and no document", async () => {
    const storage = sqliteStorage({ filename: newFile() });
    try {
      await storage.ensureCollections([{ ...DELIVERIES, fieldsReadAlone: ["body"] }]);
      const deliveries = storage.collection<Delivery>("deliveries");
      await deliveries.upsertMany([1, 2, 3].map(delivery));
      let page: Awaited<ReturnType<typeof deliveries.findFields<"body" | "createdAt">>> | undefined;
      const fromColumns = await statementsOf(async () => {
        page = await deliveries.findFields(["body", "createdAt"], { where: { hook: "h", id: { gt: "d1" } }, orderBy: [{ field: "id" }], limit: 1 });
      });
      assert.deepEqual(page!.items, [{ id: "d2", body: delivery(2).body, createdAt: 1002 }]);
      assert.deepEqual(fromColumns.filter((sql) => /\bdoc\b/.test(sql)), []);
      // `event` has no column: the documents are read.
      const fromDocuments = await statementsOf(() => deliveries.findFields(["body", "event"], { where: { hook: "h" } }));
      assert.equal(fromDocuments.filter((sql) => /^SELECT doc\b/.test(sql)).length, 1);
    } finally {
      await storage.close();
    }
  });

  it("answers a string with a lone surrogate half, which its column cannot hold, from its document", async () => {
    const storage = sqliteStorage({ filename: newFile() });
    try {
      await storage.ensureCollections([{ ...DELIVERIES, fieldsReadAlone: ["body"] }]);
      const deliveries = storage.collection<Delivery>("deliveries");
      const odd = [{ ...delivery(1), body: "\ud800 lone half" }, { ...delivery(2), body: "nul \u0000 inside" }, delivery(3)];
      await deliveries.upsertMany(odd.slice(0, 2));
      await deliveries.insert(odd[2]!);
      await deliveries.update("d2", { body: "\udfff other half" });
      odd[1]!.body = "\udfff other half";
      assert.deepEqual((await deliveries.findFields(["body"])).items.map(({ id, body }) => ({ id, body })), odd.map(({ id, body }) => ({ id, body })));
    } finally {
      await storage.close();
    }
  });

  it("a field declared read alone on an existing collection is copied from its documents once", async () => {
    const filename = newFile();
    const before = sqliteStorage({ filename });
    await before.ensureCollections([DELIVERIES]);
    await before.collection<Delivery>("deliveries").upsertMany([1, 2].map(delivery));
    await before.close();

    const declared = sqliteStorage({ filename });
    await declared.ensureCollections([{ ...DELIVERIES, fieldsReadAlone: ["body"] }]);
    assert.deepEqual((await declared.collection<Delivery>("deliveries").findFields(["body"])).items, [1, 2].map((n) => ({ id: `d${n}`, body: delivery(n).body })));
    await declared.close();

    // Kept up to date by every write from then on, the column is not copied again at the next declaration.
    const raw = new Database(filename);
    raw.prepare(`UPDATE deliveries SET "f_body" = 'changed behind its back' WHERE id = 'd1'`).run();
    raw.close();
    const again = sqliteStorage({ filename });
    try {
      await again.ensureCollections([{ ...DELIVERIES, fieldsReadAlone: ["body"] }]);
      assert.equal((await again.collection<Delivery>("deliveries").findFields(["body"])).items[0]!.body, "changed behind its back");
    } finally {
      await again.close();
    }
  });

  it("refuses a fieldsReadAlone that is not a list of field names", async () => {
    const storage = sqliteStorage({ filename: newFile() });
    try {
      await assert.rejects(storage.ensureCollections([{ name: "things", fieldsReadAlone: "body" as unknown as string[] }]), /fieldsReadAlone must be an array of field names/);
      await assert.rejects(storage.ensureCollections([{ name: "things", fieldsReadAlone: ["not a field"] }]), /invalid field name/);
    } finally {
      await storage.close();
    }
  });
});
