import assert from "node:assert/strict";
import { afterEach, it } from "node:test";
import { memoryStorage } from "../../../adapters/storage/memory/index.ts";
import type { Storage } from "../../../src/index.ts";
import { wrapStorage } from "../../support/storage-wrappers.ts";
import { startCampaignsKit, type CampaignsTestKit } from "./support.ts";

/** `storage` whose after-commit work can be dropped: what a kill -9 right after each commit, before that work runs, leaves. */
function crashingAfterCommits(storage: Storage): { storage: Storage; dieAfterEachCommit: () => void } {
  let dying = false;
  return {
    storage: wrapStorage(storage, { afterCommit: async (work) => (dying ? undefined : storage.afterCommit!(work)) }),
    dieAfterEachCommit: () => void (dying = true),
  };
}

let t: CampaignsTestKit;
afterEach(() => t.stop());

it("a delivery receipt and the campaign's delivered or failed count commit together: a crash right after the receipt's commit loses no count", async () => {
  const crashing = crashingAfterCommits(memoryStorage());
  t = await startCampaignsKit({ storage: crashing.storage });
  const phones = Array.from({ length: 5 }, (_, i) => `+1914844${String(2000 + i)}`);
  for (const phone of phones) await t.person(phone, { tier: "gold" });
  const id = await t.campaign({ segmentId: await t.segment({ attribute: { name: "tier", op: "eq", value: "gold" } }), text: "Sale today" });
  const messages = (await t.kit.outbox.list({ companyId: t.company.companyId })).filter((message) => message.kind === "campaign");
  assert.equal(messages.length, 5);

  crashing.dieAfterEachCommit();
  for (const [index, message] of messages.entries()) {
    await t.kit.outbox.applyReceipt({ messageId: message.id, providerMessageId: message.providerMessageId!, status: index < 3 ? "delivered" : "undelivered" });
  }
  const results = await t.ok("GET", `/v1/campaigns/${id}/results`);
  assert.deepEqual({ delivered: results.delivered, failed: results.failed }, { delivered: 3, failed: 2 });
});
