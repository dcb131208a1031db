// Every message writes an entry in each index of the outbox: an index is declared only for a query of the
// outbox that reads through it, and a database made by an earlier version loses the ones it no longer declares.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import Database from "better-sqlite3";
import pg from "pg";
import { postgresStorage } from "../../adapters/storage/postgres/index.ts";
import { sqliteStorage } from "../../adapters/storage/sqlite/index.ts";
import { indexName } from "../../adapters/storage/sqlite/schema.ts";
import { scanIn } from "../../bench/servers/baseline-sql.ts";
import { outboxCollection, OUTBOX_COLLECTION, type OutboxMessage } from "../../src/messaging/outbox-record.ts";
import type { Storage } from "../../src/index.ts";
import { startPostgres, type PostgresCluster } from "../support/postgres.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";
import { indexesIn, indexesRead, planOf, statementsOn } from "../support/sqlite-plans.ts";
import { startTestKit, type TestKit } from "../support/test-kit.ts";

const TO = "+15555550100";
/** Indexes an earlier version declared on the outbox, beside today's. */
const EARLIER_INDEXES = [{ fields: ["createdAt"] }, { fields: ["to", "createdAt"] }, { fields: ["companyId", "to", "createdAt"] }, { fields: ["providerMessageId"], sparse: true }];
const declared = outboxCollection.indexes!.map((index) => indexName(OUTBOX_COLLECTION, index)).sort();

/** A database made by an earlier version: the outbox with the indexes it had then. */
async function earlierDatabase(storage: Storage): Promise<void> {
  await storage.ensureCollections([{ name: OUTBOX_COLLECTION, indexes: [...outboxCollection.indexes!, ...EARLIER_INDEXES] }]);
  await storage.close();
}

const DAY = 86_400_000;
/** The test kit's clock when it starts. */
const KIT_START = Date.parse("2026-03-01T12:00:00.000Z");

/** A text as an earlier version stored it once its provider took it (at `sentAt`): the provider's id, no receipt key. */
const earlierText = (id: string, status: OutboxMessage["status"], sentAt = KIT_START - DAY): OutboxMessage => ({
  id,
  companyId: "earlier-company",
  to: TO,
  from: "+15550001111",
  body: "hello",
  kind: "test",
  status,
  idempotencyKey: id,
  providerMessageId: `SM-${id}`,
  attempts: 1,
  createdAt: sentAt,
  updatedAt: sentAt,
  sentAt,
});

/**
 * A database of the version that looked receipts up by `providerMessageId`, with a text still sent yesterday,
 * one delivered, and one sent eight days ago; started on today's outbox, a receipt without the message id
 * still finds yesterday's, and the upgrade leaves the others unkeyed (no receipt comes a week after a send).
 */
async function receiptAfterUpgrade(earlier: Storage, today: () => Storage): Promise<void> {
  await earlier.ensureCollections([{ name: OUTBOX_COLLECTION, indexes: [...outboxCollection.indexes!.filter((index) => index.fields[0] !== "receiptKey"), { fields: ["providerMessageId"], sparse: true }] }]);
  await earlier.collection<OutboxMessage>(OUTBOX_COLLECTION).upsertMany([earlierText("sent-before", "sent"), earlierText("delivered-before", "delivered"), earlierText("sent-long-ago", "sent", KIT_START - 8 * DAY)]);
  await earlier.close();
  const t = await startTestKit({ storage: today() });
  try {
    await t.kit.outbox.applyReceipt({ providerMessageId: "SM-sent-before", status: "delivered" });
    const [sent, delivered] = [await t.kit.outbox.get("sent-before"), await t.kit.outbox.get("delivered-before")];
    assert.deepEqual([sent?.status, sent?.receiptKey], ["delivered", "SM-sent-before"]);
    // A final status stays whatever a receipt says: such a text needs no key.
    assert.deepEqual([delivered?.status, delivered?.receiptKey], ["delivered", undefined]);
    assert.deepEqual([(await t.kit.outbox.get("sent-long-ago"))?.receiptKey], [undefined]);
  } finally {
    await t.stop();
  }
}

/** Runs every query the outbox makes: sending (with its duplicate and repeat checks), delivering, receipts, pages, counts, lists, privacy. */
async function everyOutboxQuery(t: TestKit): Promise<void> {
  const { companyId } = t.company;
  await t.kit.outbox.send({ companyId, to: TO, body: "hello", kind: "test", idempotencyKey: "k-1", suppressDuplicates: true, onePerKindWithinMs: 60_000 });
  await t.scheduler.flush();
  const [sent] = t.sms.sentTo(TO);
  await t.kit.outbox.applyReceipt({ providerMessageId: sent!.providerMessageId, status: "delivered" });
  for (const query of [{}, { status: "delivered" as const }, { to: TO }]) await t.kit.outbox.page(companyId, query);
  await t.kit.outbox.dailyCounts(companyId, [{ start: 0, end: t.clock.now() + 1 }]);
  for (const options of [{ to: TO }, { companyId }, { companyId, to: TO }]) await t.kit.outbox.list(options);
  assert.equal(await t.kit.outbox.deleteForRecipient(companyId, TO), 1);
}

describe("the outbox's indexes", () => {
  it("on SQLite: each of its statements seeks through an index, each index serves one, and an earlier database loses the others", async () => {
    const file = join(temporaryDirectory("outbox-indexes"), "reachkit.db");
    await earlierDatabase(sqliteStorage({ filename: file }));
    const t = await startTestKit({ storage: sqliteStorage({ filename: file }) });
    const statements = await statementsOn(OUTBOX_COLLECTION, () => everyOutboxQuery(t));
    await t.stop();
    const db = new Database(file, { readonly: true });
    try {
      assert.deepEqual(indexesIn(db, OUTBOX_COLLECTION), declared);
      const used = new Set<string>();
      for (const sql of statements) {
        assert.equal(scanIn(db, sql), undefined, sql);
        const plan = planOf(db, sql);
        for (const index of indexesRead(plan)) used.add(index);
        // The duplicate and repeat checks read a number's window oldest first, in the index's own order (createdAt,
        // then id), and stop at the first match: no sort at all, not even of the last term's ties. A burst's text is
        // the oldest of its window; read newest first, every suppressed attempt since it was read before it.
        if (/"f_createdAt" >= \?.* LIMIT 1$/.test(sql)) {
          assert.match(sql, /ORDER BY "f_createdAt" ASC, id ASC LIMIT 1$/);
          assert.deepEqual(plan.filter((detail) => detail.includes("TEMP B-TREE")), [], sql);
        }
      }
      assert.deepEqual(declared.filter((name) => !used.has(name)), [], "declared indexes that no query of the outbox reads through");
    } finally {
      db.close();
    }
  });

  it("on SQLite: a text still sent in a database made before receipt keys is found by a receipt without its id", async () => {
    const file = join(temporaryDirectory("outbox-receipt-keys"), "reachkit.db");
    await receiptAfterUpgrade(sqliteStorage({ filename: file }), () => sqliteStorage({ filename: file }));
  });

  describe("on PostgreSQL", () => {
    let cluster: PostgresCluster;
    before(async () => {
      cluster = await startPostgres();
    });
    after(() => cluster.stop());

    it("an earlier database loses the indexes the outbox no longer declares", async () => {
      const url = await cluster.createDatabase();
      await earlierDatabase(postgresStorage({ url, poolSize: 1 }));
      const t = await startTestKit({ storage: postgresStorage({ url, poolSize: 2 }) });
      await t.stop();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE tablename = $1 AND indexname <> $2`, [OUTBOX_COLLECTION, `${OUTBOX_COLLECTION}_pkey`]);
        assert.deepEqual(rows.map((row) => row.indexname).sort(), declared);
      } finally {
        await client.end();
      }
    });

    it("a text still sent in a database made before receipt keys is found by a receipt without its id", async () => {
      const url = await cluster.createDatabase();
      await receiptAfterUpgrade(postgresStorage({ url, poolSize: 1 }), () => postgresStorage({ url, poolSize: 2 }));
    });
  });
});
