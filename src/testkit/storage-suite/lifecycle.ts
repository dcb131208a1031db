import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Storage } from "../../ports/storage.ts";
import { SPECS, type Person } from "./shared.ts";

// Takes makeStorage rather than withStorage: the test closes the storage itself.
export function lifecycleTests(makeStorage: () => Promise<Storage> | Storage): void {
  describe("lifecycle", () => {
    it("rejects calls after close", async () => {
      const storage = await makeStorage();
      await storage.ensureCollections(SPECS);
      const people = storage.collection<Person>("people");
      await people.insert({ id: "a" });
      await storage.close();
      await assert.rejects(people.get("a"));
      await assert.rejects(people.insert({ id: "b" }));
      await assert.rejects(people.find());
      await assert.rejects(storage.transaction(async () => undefined));
      await storage.close();
    });

    it("two closes asked at once both resolve, once the calls asked before them are done", async () => {
      const storage = await makeStorage();
      await storage.ensureCollections(SPECS);
      const people = storage.collection<Person>("people");
      const inserted = people.insert({ id: "a" });
      const closes = [storage.close(), storage.close()];
      await Promise.all([inserted, ...closes]);
      await assert.rejects(people.get("a"));
    });
  });
}
