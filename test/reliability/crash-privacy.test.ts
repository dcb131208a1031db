import assert from "node:assert/strict";
import { join } from "node:path";
import { it } from "node:test";
import Database from "better-sqlite3";
import { PRIVACY_REQUESTS } from "../../plugins/privacy/records.ts";
import { OUTBOX_COLLECTION } from "../../src/messaging/outbox-record.ts";
import type { OutboxMessage, Reachkit } from "../../src/index.ts";
import { seedSubscribers } from "../../bench/seed.ts";
import { openServerKit } from "../support/cli.ts";
import { waitUntil } from "../support/wait.ts";
import { CrashableServer } from "./support.ts";

const SUBJECT = "+19148446001";
const OTHER = "+19148446002";
/** A long history: texts enough that deleting them takes a while, so the kill lands mid-purge. */
const HISTORY = 40_000;

/** Runs `read` on the data directory's kit, with the server down. */
async function offline<T>(dataDir: string, read: (kit: Reachkit, companyId: string) => Promise<T>): Promise<T> {
  const kit = await openServerKit(dataDir);
  try {
    return await read(kit, (await kit.plugin("accounts").listCompanies())[0]!.id);
  } finally {
    await kit.stop();
  }
}

/** Texts of the outbox to one number. */
const textsTo = (kit: Reachkit, companyId: string, to: string) => kit.storage.collection<OutboxMessage>(OUTBOX_COLLECTION).count({ companyId, to });

it("kill -9 in the middle of a privacy purge: after the restart the purge completes", { timeout: 60_000 }, async () => {
  const server = new CrashableServer();
  try {
    // A company whose subject has a subscription and years of texts, written straight to the database
    // (sending them would take hours at the rate limit), before the server's first start.
    const setup = await openServerKit(server.dataDir);
    try {
      const { output, company } = await setup.provisionCompany({ name: "My Company" });
      server.apiKey = output.apiKey as string;
      await seedSubscribers(setup.storage, company.id, 2, (i) => [SUBJECT, OTHER][i]!);
      const outbox = setup.storage.collection<OutboxMessage>(OUTBOX_COLLECTION);
      const sentAt = Date.now() - 86_400_000;
      const text = (n: number, to: string): OutboxMessage => ({ id: `history-${String(n).padStart(6, "0")}`, companyId: company.id, to, from: "+15550000000", body: `Order ${n} has shipped.`, kind: "transactional", status: "sent", idempotencyKey: `history-${n}`, attempts: 1, createdAt: sentAt + n, updatedAt: sentAt + n, sentAt: sentAt + n });
      for (let start = 0; start < HISTORY; start += 10_000) {
        await setup.storage.transaction(() => outbox.upsertMany(Array.from({ length: 10_000 }, (_, offset) => text(start + offset, SUBJECT))));
      }
      await outbox.insert(text(HISTORY, OTHER));
    } finally {
      await setup.stop();
    }

    await server.start();
    const created = await server.request("POST", "/v1/privacy/delete-request", { subjectPhone: SUBJECT });
    assert.equal(created.status, 200, JSON.stringify(created.json));
    const requestPath = `/v1/privacy/delete-request/${created.json.id}`;
    // The server is busy deleting: its own answers would come too late. The database says at once (a WAL reader never waits).
    const database = new Database(join(server.dataDir, "reachkit.db"), { readonly: true });
    const started = database.prepare(`SELECT json_extract(doc, '$.processingStartedAt') FROM ${PRIVACY_REQUESTS} WHERE id = ?`).pluck();
    try {
      await waitUntil("the purge started", () => started.get(created.json.id) !== null, 20_000);
    } finally {
      database.close();
    }
    await server.crash();

    const afterCrash = await offline(server.dataDir, async (kit, companyId) => ({
      request: await kit.plugin("privacy").get(companyId, created.json.id),
      subjectTexts: await textsTo(kit, companyId, SUBJECT),
    }));
    assert.equal(afterCrash.request.processed, false, "killed before the purge finished");
    assert.ok(afterCrash.request.processingStartedAt !== undefined, "killed after it started");
    assert.ok(afterCrash.subjectTexts > 0, "the subject's texts are still there");

    await server.start();
    await waitUntil("the purge completed", async () => (await server.request("GET", requestPath)).json.processed === true, 40_000);
    const done = (await server.request("GET", requestPath)).json;
    assert.ok(done.processingEndDateTime, "an end time");
    assert.equal(done.processingStartDateTime, (await server.request("GET", requestPath)).json.processingStartDateTime);
    await server.stop();

    await offline(server.dataDir, async (kit, companyId) => {
      assert.equal(await textsTo(kit, companyId, SUBJECT), 0, "every text to the subject is deleted");
      assert.equal(await textsTo(kit, companyId, OTHER), 1, "another subscriber's text stays");
      assert.equal(await kit.plugin("subscriptions").findSubscriber(companyId, { phone: SUBJECT }), undefined, "the subscriber is deleted");
      assert.ok(await kit.plugin("subscriptions").findSubscriber(companyId, { phone: OTHER }), "another subscriber stays");
      const request = await kit.plugin("privacy").get(companyId, created.json.id);
      assert.ok((request.removedRecords ?? 0) >= HISTORY, `${request.removedRecords} records removed`);
    });
  } finally {
    await server.dispose();
  }
});
