import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import Database from "better-sqlite3";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import { DELIVERIES, webhookCollections, type DeliveryRecord } from "../../../plugins/webhooks/records.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";

const directory = temporaryDirectory("sqlite-webhook-deliveries");
let files = 0;
const newFile = () => join(directory, `db-${++files}.sqlite`);

function tableDdl(file: string, table: string): string {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").pluck().get(table) as string;
  } finally {
    db.close();
  }
}

const delivery = (id: string, dueAt: number): DeliveryRecord => ({
  id,
  webhookId: "wh_1",
  companyId: "co_1",
  applicationId: "app_1",
  event: "sms.subscribed",
  body: JSON.stringify({ type: "sms.subscribed", padding: "x".repeat(400) }),
  status: "pending",
  attempts: 0,
  dueAt,
  createdAt: dueAt,
  updatedAt: dueAt,
});

/** What a drain does with a page of deliveries: reads the due ones in (dueAt, id) order, then writes their outcomes together. */
async function drainOnce(file: string): Promise<{ due: string[]; after: Array<Pick<DeliveryRecord, "id" | "status" | "attempts" | "dueAt">> }> {
  const storage = sqliteStorage({ filename: file });
  await storage.ensureCollections(webhookCollections);
  const deliveries = storage.collection<DeliveryRecord>(DELIVERIES);
  const page = await deliveries.find({ where: { webhookId: "wh_1", dueAt: { lte: 2_000 } }, orderBy: [{ field: "dueAt" }, { field: "id" }] });
  await storage.transaction(() => deliveries.updateEach(page.items.map(({ id }) => ({ id, patch: { status: "delivered", attempts: 1, dueAt: undefined } }))));
  const after = (await deliveries.find({ orderBy: [{ field: "id" }] })).items.map(({ id, status, attempts, dueAt }) => ({ id, status, attempts, dueAt }));
  await storage.close();
  return { due: page.items.map(({ id }) => id), after };
}

describe("the webhooks' deliveries on SQLite", () => {
  it("are a rowid table in a new database (their documents are a few hundred bytes: a WITHOUT ROWID tree holds few to a page)", async () => {
    const file = newFile();
    const storage = sqliteStorage({ filename: file });
    await storage.ensureCollections(webhookCollections);
    await storage.close();
    assert.doesNotMatch(tableDdl(file, DELIVERIES), /WITHOUT ROWID/);
  });

  it("keep an earlier database's WITHOUT ROWID table, whose deliveries are read and written as before", async () => {
    const file = newFile();
    // The declaration of an earlier version: without largeDocuments.
    const earlier = sqliteStorage({ filename: file });
    await earlier.ensureCollections(webhookCollections.map((spec) => (spec.name === DELIVERIES ? { ...spec, largeDocuments: false } : spec)));
    await earlier.collection<DeliveryRecord>(DELIVERIES).upsertMany([delivery("msg_b", 2_000), delivery("msg_a", 1_000), delivery("msg_c", 3_000)]);
    await earlier.close();
    assert.match(tableDdl(file, DELIVERIES), /WITHOUT ROWID/);

    const { due, after } = await drainOnce(file);
    assert.match(tableDdl(file, DELIVERIES), /WITHOUT ROWID/);
    assert.deepEqual(due, ["msg_a", "msg_b"]);
    assert.deepEqual(after, [
      { id: "msg_a", status: "delivered", attempts: 1, dueAt: undefined },
      { id: "msg_b", status: "delivered", attempts: 1, dueAt: undefined },
      { id: "msg_c", status: "pending", attempts: 0, dueAt: 3_000 },
    ]);
  });
});
