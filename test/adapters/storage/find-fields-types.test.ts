import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { memoryStorage } from "../../../adapters/storage/memory/index.ts";
import type { Collection, Doc } from "../../../src/ports/storage.ts";

interface Delivery extends Doc {
  body: string;
  attempts: number;
  status?: string;
  urgent?: boolean;
  error?: string | null;
  tags?: string[];
}

// `npm test` type-checks this file first: each line below must stay a type error. Never called.
export function fieldsThatCannotBeReadAlone(deliveries: Collection<Delivery>): void {
  // @ts-expect-error a boolean: SQLite's column would answer 1
  void deliveries.findFields(["urgent"]);
  // @ts-expect-error a nullable field: a NULL column reads back as an absent field
  void deliveries.findFields(["error"]);
  // @ts-expect-error an array: its column holds JSON text
  void deliveries.findFields(["tags"]);
}

describe("findFields on the memory adapter", () => {
  it("answers exactly the id and the named fields, so that a reader of another fails in tests", async () => {
    const storage = memoryStorage();
    try {
      await storage.ensureCollections([{ name: "deliveries", fieldsReadAlone: ["body"] }]);
      const deliveries = storage.collection<Delivery>("deliveries");
      await deliveries.insert({ id: "d1", body: "{}", attempts: 2, status: "pending", urgent: true, tags: ["a"] });
      const page = await deliveries.findFields(["body", "status"]);
      assert.deepEqual(page.items, [{ id: "d1", body: "{}", status: "pending" }]);
      // The item is typed as the named fields only.
      const item: { id: string; body: string; status?: string } = page.items[0]!;
      assert.equal("attempts" in item, false);
    } finally {
      await storage.close();
    }
  });
});
