import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SmsSendError, type Outbox, type OutboxMessage } from "../../src/index.ts";
import { memorySms } from "../../adapters/sms/memory/index.ts";
import { startTestKit } from "../support/test-kit.ts";

const DAY = 86_400_000;

/** Every page of a query, following the cursors. */
async function allPages(outbox: Outbox, companyId: string, query: Parameters<Outbox["page"]>[1] & object): Promise<OutboxMessage[][]> {
  const pages: OutboxMessage[][] = [];
  let after: string | undefined;
  do {
    const page = await outbox.page(companyId, { ...query, after });
    pages.push(page.items);
    after = page.nextCursor;
  } while (after);
  return pages;
}

describe("the outbox's pages and daily counts", () => {
  it("pages a company's messages newest first, by status or recipient, never another company's", async () => {
    const sms = memorySms();
    const t = await startTestKit({ sms });
    const other = await t.kit.provisionCompany({ name: "Globex" });
    const companyId = t.company.companyId;
    const bodies: string[] = [];
    for (let n = 0; n < 7; n++) {
      const to = n % 2 === 0 ? "+15555550100" : "+15555550101";
      await t.kit.outbox.send({ companyId, to, body: `message ${n}`, kind: "test" });
      bodies.push(`message ${n}`);
      t.clock.advance(1000);
    }
    await t.kit.outbox.send({ companyId: (other.output as { companyId: string }).companyId, to: "+15555550100", body: "Globex's", kind: "test" });
    // The last two fail permanently at the provider.
    let sent = 0;
    sms.send = async () => {
      if (++sent > 5) throw new SmsSendError("invalid_number", "invalid number");
      return { providerMessageId: `p-${sent}` };
    };
    await t.scheduler.flush();

    const pages = await allPages(t.kit.outbox, companyId, { limit: 3 });
    assert.deepEqual(pages.map((page) => page.length), [3, 3, 1]);
    assert.deepEqual(pages.flat().map((message) => message.body), [...bodies].reverse());
    const failed = (await t.kit.outbox.page(companyId, { status: "failed" })).items;
    assert.equal(failed.length, 2);
    assert.ok(failed.every((message) => message.status === "failed" && message.reason === "invalid number"));
    const toOne = (await allPages(t.kit.outbox, companyId, { to: "+15555550101", limit: 2 })).flat();
    assert.deepEqual(toOne.map((message) => message.body), ["message 5", "message 3", "message 1"]);
    assert.equal((await t.kit.outbox.page(companyId, { limit: 500 })).items.length, 7, "the limit is capped, not refused");
    await t.stop();
  });

  it("counts a company's messages per day by status", async () => {
    const t = await startTestKit();
    const companyId = t.company.companyId;
    const start = t.clock.now();
    await t.kit.outbox.send({ companyId, to: "+15555550100", body: "one", kind: "test" });
    await t.scheduler.flush();
    t.clock.advance(DAY);
    await t.kit.outbox.send({ companyId, to: "+15555550100", body: "two", kind: "test" });
    await t.kit.outbox.send({ companyId, to: "+15555550100", body: "two", kind: "test", suppressDuplicates: true });
    await t.kit.outbox.send({ companyId, to: "+15555550100", body: "two", kind: "test", suppressDuplicates: true });
    const days = [0, 1, 2].map((n) => ({ start: start + n * DAY, end: start + (n + 1) * DAY }));
    const counts = await t.kit.outbox.dailyCounts(companyId, days);
    assert.deepEqual(
      counts.map((day) => day.counts),
      [
        { queued: 0, sent: 1, delivered: 0, undelivered: 0, failed: 0, suppressed: 0 },
        { queued: 1, sent: 0, delivered: 0, undelivered: 0, failed: 0, suppressed: 2 },
        { queued: 0, sent: 0, delivered: 0, undelivered: 0, failed: 0, suppressed: 0 },
      ],
    );
    assert.deepEqual((await t.kit.outbox.dailyCounts("another company", days)).map((day) => day.counts.sent + day.counts.queued), [0, 0, 0]);
    await t.stop();
  });
});
