import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import { sqliteStorage } from "../../adapters/storage/sqlite/index.ts";
import { STARTS_PER_TURN } from "../../src/messaging/outbox-deliveries.ts";
import { turnCounter } from "../support/event-loop-turns.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";
import { startTestKit, type TestKit } from "../support/test-kit.ts";

/** A page (twice `sendsAtOnce`) larger than the texts handed over in one turn. */
const SENDS_AT_ONCE = STARTS_PER_TURN;
const PAGE = SENDS_AT_ONCE * 2;
const TEXTS = PAGE * 6;
const phoneOf = (i: number) => `+1914844${String(1000 + i)}`;

/**
 * An embedded kit shares its host's event loop: while the outbox delivers a large send (a provider that answers at
 * once, storage that answers without I/O), the host must go on answering. Each test counts turns of the event loop,
 * never time: a drain that chained its pages in promises held the loop for dozens of pages at a time.
 */
describe("the outbox's delivery shares the event loop", () => {
  let t: TestKit;
  beforeEach(async () => {
    t = await startTestKit({
      storage: sqliteStorage({ filename: join(temporaryDirectory("outbox-turns"), "reachkit.db") }),
      config: { messaging: { ratePerSecond: Infinity, sendsAtOnce: SENDS_AT_ONCE } },
    });
    const { companyId } = t.company;
    await t.kit.outbox.sendMany(Array.from({ length: TEXTS }, (_, i) => ({ companyId, to: phoneOf(i), body: `Sale ${i}`, kind: "test" })));
  });
  afterEach(() => t.stop());

  it("starts at most STARTS_PER_TURN texts in one turn of the event loop, fewer than a page, in order, each once", async () => {
    const turns = turnCounter();
    const sentInTurn = new Map<number, number>();
    const send = t.sms.send.bind(t.sms);
    t.sms.send = (text) => {
      sentInTurn.set(turns.turns, (sentInTurn.get(turns.turns) ?? 0) + 1);
      return send(text);
    };
    try {
      await t.scheduler.flush();
    } finally {
      turns.stop();
    }
    assert.deepEqual(t.sms.sent.map((text) => text.to), Array.from({ length: TEXTS }, (_, i) => phoneOf(i)));
    const most = Math.max(...sentInTurn.values());
    assert.ok(most <= STARTS_PER_TURN, `${most} texts were started in one turn (a page is ${PAGE}): ${JSON.stringify([...sentInTurn])}`);
    const counts = await t.kit.outbox.dailyCounts(t.company.companyId, [{ start: 0, end: t.clock.now() + 1 }]);
    assert.equal(counts[0]!.counts.sent, TEXTS);
  });

  it("answers the host's HTTP request made during the delivery before its last page", async () => {
    const host = createServer((_request, response) => response.end("ok"));
    await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = host.address() as AddressInfo;
      const send = t.sms.send.bind(t.sms);
      let sentWhenAnswered: number | undefined;
      let answered: Promise<void> | undefined;
      t.sms.send = (text) => {
        // Asked once the first page went: the drain is under way.
        answered ??= fetch(`http://127.0.0.1:${port}/`).then(async (response) => {
          assert.equal(await response.text(), "ok");
          sentWhenAnswered = t.sms.sent.length;
        });
        return send(text);
      };
      await t.scheduler.flush();
      await answered;
      assert.equal(t.sms.sent.length, TEXTS);
      assert.ok(sentWhenAnswered! < TEXTS - PAGE, `answered after ${sentWhenAnswered} of ${TEXTS} texts`);
    } finally {
      await new Promise((resolve) => host.close(resolve));
    }
  });
});
