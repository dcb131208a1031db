import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import type { Doc } from "../../../src/ports/storage.ts";
import { watchStatements } from "../../support/sqlite-statements.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";

interface Task extends Doc {
  status: string;
  runAt: number;
}

/** The query plans of the statements naming rows by a list of ids that run during `work`. */
async function plansOfIdLists(work: () => Promise<void>): Promise<string[]> {
  const plans: string[] = [];
  await watchStatements(work, (statement, args) => {
    if (!statement.source.startsWith("EXPLAIN") && /\bid IN \(/.test(statement.source)) {
      const plan = statement.database.prepare(`EXPLAIN QUERY PLAN ${statement.source}`).raw(false).pluck(false).all(...args) as Array<{ detail: string }>;
      plans.push(plan.map((step) => step.detail).join("; "));
    }
  });
  return plans;
}

describe("SQLite: rows named by a list of ids", () => {
  it("are looked up by primary key, not through an index on another field of the where, however many rows that index holds", async () => {
    const storage = sqliteStorage({ filename: join(temporaryDirectory("sqlite-id-lookups"), "kit.db") });
    await storage.ensureCollections([{ name: "tasks", indexes: [{ fields: ["status", "runAt"] }] }]);
    const tasks = storage.collection<Task>("tasks");
    await storage.transaction(async () => {
      for (let i = 0; i < 2_000; i++) await tasks.insert({ id: `task-${String(i).padStart(4, "0")}`, status: "queued", runAt: i });
    });
    // As many as a wake claims: with a few, SQLite looks them up by id on its own.
    const ids = Array.from({ length: 32 }, (_, i) => `task-${String(i * 60).padStart(4, "0")}`);
    const plans = await plansOfIdLists(async () => {
      assert.equal(await storage.transaction(() => tasks.updateWhere({ id: { in: ids }, status: "queued" }, { status: "running" })), 32);
      const found = await tasks.find({ where: { id: { in: ids }, status: "running" }, limit: 32 });
      assert.deepEqual(found.items.map((task) => task.id), ids);
    });
    assert.equal(plans.length, 2, plans.join("\n"));
    for (const plan of plans) assert.match(plan, /USING PRIMARY KEY/, plan);
    await storage.close();
  });
});
