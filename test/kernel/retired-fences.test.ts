import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { sqliteStorage } from "../../adapters/storage/sqlite/index.ts";
import { startJourneysKit } from "../plugins/journeys/support.ts";
import { PHONE } from "../plugins/subscriptions/support.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";

const OUTBOX_FENCES = "reachkit_outbox_fences";
const CAP_FENCES = "send_rules_cap_fences";

describe("the fence collections that PostgreSQL transactions took turns on, retired for lockKey", () => {
  it("an older database holding fence rows starts, sends under the cap and the repeat window, and its fence rows are gone (their ids held phone numbers)", async () => {
    const file = join(temporaryDirectory("retired-fences"), "reachkit.db");
    // The database as the older kit left it: both collections as it declared them, each with a row.
    const older = sqliteStorage({ filename: file });
    await older.ensureCollections([{ name: OUTBOX_FENCES }, { name: CAP_FENCES, indexes: [{ fields: ["companyId", "to"] }] }]);
    const fence = { id: JSON.stringify(["c1", PHONE]), companyId: "c1", to: PHONE };
    await older.collection<typeof fence>(OUTBOX_FENCES).insert(fence);
    await older.collection<typeof fence>(CAP_FENCES).insert(fence);
    await older.close();

    const t = await startJourneysKit({ storage: sqliteStorage({ filename: file }), sendRules: { dailyCap: 1 } });
    try {
      for (const name of [OUTBOX_FENCES, CAP_FENCES]) assert.equal(await t.kit.storage.collection(name).count(), 0, name);
      await t.subscribe(PHONE);
      const send = (n: number) =>
        t.kit.plugin("sendRules").send({ companyId: t.company.companyId, to: PHONE, messageType: "MARKETING", body: `Offer ${n}`, kind: "campaign", idempotencyKey: `campaign-${n}` });
      assert.deepEqual([(await send(1)).status, (await send(2)).status], ["sent", "skipped"]);
      const repeat = () => t.kit.outbox.send({ companyId: t.company.companyId, to: PHONE, body: "Hi", kind: "already_unsubscribed", onePerKindWithinMs: 60_000 });
      assert.deepEqual([(await repeat()).status, (await repeat()).status], ["queued", "suppressed"]);
      for (const name of [OUTBOX_FENCES, CAP_FENCES]) assert.equal(await t.kit.storage.collection(name).count(), 0, name);
    } finally {
      await t.stop();
    }
  });
});
