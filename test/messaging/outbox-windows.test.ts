import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { memoryStorage } from "../../adapters/storage/memory/index.ts";
import { sqliteStorage } from "../../adapters/storage/sqlite/index.ts";
import type { OutboundMessage } from "../../src/index.ts";
import { OUTBOX_COLLECTION } from "../../src/messaging/outbox-record.ts";
import { statementsOf } from "../support/sqlite-statements.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";
import { startTestKit } from "../support/test-kit.ts";

const MINUTE = 60_000;
const phone = (i: number) => `+1555555${String(i).padStart(4, "0")}`;

const storages = [
  ["in memory", () => memoryStorage()],
  ["on SQLite", () => sqliteStorage({ filename: join(temporaryDirectory("outbox-windows"), "reachkit.db") })],
] as const;

describe("the outbox's sendMany with repeat and duplicate windows", () => {
  for (const [name, storage] of storages) {
    it(`sends the first text of a number and kind in a list, suppresses the later ones and those a stored text covers (${name})`, async () => {
      const t = await startTestKit({ storage: storage() });
      const { companyId } = t.company;
      const text = (to: string, kind: string, key: string, window: Partial<OutboundMessage> = { onePerKindWithinMs: MINUTE }): OutboundMessage => ({ companyId, to, body: `a ${kind}`, kind, idempotencyKey: key, ...window });
      await t.kit.outbox.send(text(phone(9), "opt_in", "stored"));
      t.clock.advance(1000);
      const stored = await t.kit.outbox.sendMany([
        text(phone(1), "opt_in", "a"),
        text(phone(1), "opt_in", "b"),
        text(phone(1), "welcome", "c"),
        text(phone(2), "opt_in", "d"),
        text(phone(9), "opt_in", "e"),
        text(phone(1), "opt_in", "a"),
        // Not windowed itself, it still goes: the windowed one after it is suppressed.
        text(phone(3), "opt_in", "f", {}),
        text(phone(3), "opt_in", "g"),
        text(phone(4), "code", "h", { suppressDuplicates: true }),
        text(phone(4), "code", "i", { suppressDuplicates: true }),
      ]);
      assert.deepEqual(
        stored.map((message) => `${message.idempotencyKey} ${message.status}`),
        ["a queued", "b suppressed", "c queued", "d queued", "e suppressed", "a queued", "f queued", "g suppressed", "h queued", "i suppressed"],
      );
      assert.match(stored[1]!.reason ?? "", /^repeat: a opt_in text/);
      assert.match(stored[9]!.reason ?? "", /^duplicate/);
      assert.equal(stored[5]!.id, stored[0]!.id, "a key given twice is one message");
      await t.scheduler.flush();
      assert.deepEqual(t.sms.sent.map((sent) => `${sent.to} ${sent.body}`).sort(), [
        `${phone(1)} a opt_in`,
        `${phone(1)} a welcome`,
        `${phone(2)} a opt_in`,
        `${phone(3)} a opt_in`,
        `${phone(4)} a code`,
        `${phone(9)} a opt_in`,
      ]);
      // Stored as answered: the suppressed attempts are recorded, never due.
      const suppressed = (await t.kit.outbox.list()).filter((message) => message.status === "suppressed");
      assert.deepEqual(suppressed.map((message) => message.idempotencyKey).sort(), ["b", "e", "g", "i"]);
      assert.ok(suppressed.every((message) => message.dueAt === undefined));
      // Past the window, the next list's first text of a number and kind goes again.
      t.clock.advance(MINUTE + 1);
      const later = await t.kit.outbox.sendMany([text(phone(1), "opt_in", "j"), text(phone(1), "opt_in", "k")]);
      assert.deepEqual(later.map((message) => message.status), ["queued", "suppressed"]);
      await t.stop();
    });
  }

  it("recordSuppressed: false answers a suppressed text without storing it; the text that went still closes the window", async () => {
    const t = await startTestKit();
    const { companyId } = t.company;
    const repeat = (key: string): OutboundMessage => ({ companyId, to: phone(1), body: "Reply Y", kind: "opt_in", idempotencyKey: key, onePerKindWithinMs: MINUTE, recordSuppressed: false });
    const answers = await t.kit.outbox.sendMany([repeat("a"), repeat("b"), repeat("c")]);
    assert.deepEqual(answers.map((message) => `${message.idempotencyKey} ${message.status}`), ["a queued", "b suppressed", "c suppressed"]);
    assert.match(answers[1]!.reason ?? "", /^repeat: a opt_in text/);
    assert.equal((await t.kit.outbox.send(repeat("d"))).status, "suppressed");
    await t.scheduler.flush();
    assert.equal(t.sms.sent.length, 1);
    assert.deepEqual((await t.kit.outbox.list()).map((message) => `${message.idempotencyKey} ${message.status}`), ["a sent"]);
    t.clock.advance(MINUTE + 1);
    assert.equal((await t.kit.outbox.send(repeat("e"))).status, "queued");
    await t.stop();
  });

  it("records a list of windowed texts on SQLite in one write, after a read of the keys taken and one per number however many texts it has", async () => {
    const storage = sqliteStorage({ filename: join(temporaryDirectory("outbox-windows"), "reachkit.db") });
    const t = await startTestKit({ storage });
    const { companyId } = t.company;
    let key = 0;
    // Each number twice: the first text of each goes, the second is suppressed. Lists of a power of two, so that
    // SQLite's multi-row insert takes each in one statement.
    const burst = (texts: number): OutboundMessage[] =>
      Array.from({ length: texts }, (_, i) => ({ companyId, to: phone(i % (texts / 2)), body: "Reply Y", kind: "opt_in", idempotencyKey: `k${key++}`, onePerKindWithinMs: MINUTE }));
    const statementKinds = async (messages: OutboundMessage[]) =>
      (await statementsOf(() => t.kit.outbox.sendMany(messages))).filter((sql) => sql.includes(`"${OUTBOX_COLLECTION}"`)).map((sql) => sql.split(" ")[0]);
    const reads = (numbers: number) => ["SELECT", ...Array.from({ length: numbers }, () => "SELECT"), "INSERT"];
    assert.deepEqual(await statementKinds(burst(8)), reads(4));
    assert.deepEqual(await statementKinds(burst(128)), reads(64));
    const stored = await t.kit.outbox.list();
    assert.equal(stored.length, 136);
    assert.equal(stored.filter((message) => message.status === "queued").length, 64, "each of the 64 numbers once, in either list");
    await t.stop();
  });
});
