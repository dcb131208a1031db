import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { memorySms, type MemorySms } from "../../adapters/sms/memory/index.ts";
import { sqliteStorage } from "../../adapters/storage/sqlite/index.ts";
import { SmsSendError, type OutboxMessage } from "../../src/index.ts";
import { OUTBOX_COLLECTION } from "../../src/messaging/outbox-record.ts";
import { statementsOf } from "../support/sqlite-statements.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";
import { startTestKit, type TestKit } from "../support/test-kit.ts";

const TEXTS = 16;

/** The statements of the first transaction in `statements`, BEGIN to COMMIT. */
function firstTransaction(statements: readonly string[]): string[] {
  const begin = statements.findIndex((sql) => sql.startsWith("BEGIN IMMEDIATE"));
  const commit = statements.indexOf("COMMIT", begin);
  assert.ok(begin >= 0 && commit > begin, `a transaction: ${statements.join("\n")}`);
  return statements.slice(begin, commit + 1);
}

/** A provider that holds every text until `answerAll`: the texts it took are then answered together. */
function heldSms(): { sms: MemorySms; held: () => number; answerAll: () => void } {
  const memory = memorySms();
  const answers: Array<() => void> = [];
  const sms: MemorySms = {
    ...memory,
    async send(message) {
      await new Promise<void>((answer) => answers.push(answer));
      return memory.send(message);
    },
  };
  return { sms, held: () => answers.length, answerAll: () => answers.splice(0).forEach((answer) => answer()) };
}

/** A kit on SQLite whose sender has every queued text at the provider at once. */
async function kitWithTexts(count: number): Promise<{ t: TestKit; provider: ReturnType<typeof heldSms>; ids: string[]; delivered: Promise<void> }> {
  const provider = heldSms();
  const storage = sqliteStorage({ filename: join(temporaryDirectory("outcome-batches"), "reachkit.db") });
  const t = await startTestKit({ storage, sms: provider.sms, config: { messaging: { ratePerSecond: Infinity, sendsAtOnce: count } } });
  const ids: string[] = [];
  for (let i = 1; i <= count; i++) {
    const message = await t.kit.outbox.send({ companyId: t.company.companyId, to: `+1555555040${String(i).padStart(2, "0")}`, body: `text ${i}`, kind: "test" });
    ids.push(message.id);
  }
  const delivered = t.scheduler.flush();
  while (provider.held() < count) await new Promise((resolve) => setImmediate(resolve));
  return { t, provider, ids, delivered };
}

describe("the outcomes of texts answered together", () => {
  it("commit in one transaction of one statement a text: no read, no savepoint for each", async () => {
    const { t, provider, ids, delivered } = await kitWithTexts(TEXTS);
    const statements = await statementsOf(async () => {
      provider.answerAll();
      await delivered;
    });
    const outcomes = firstTransaction(statements).slice(1, -1);
    // Each text's read, write and savepoint's two statements made four a text.
    assert.equal(outcomes.length, TEXTS, outcomes.join("\n"));
    assert.ok(outcomes.every((sql) => sql.startsWith(`UPDATE "${OUTBOX_COLLECTION}"`)), outcomes.join("\n"));
    const stored = await t.kit.outbox.list();
    assert.deepEqual(
      ids.map((id) => stored.find((message) => message.id === id)).map((message) => [message?.status, message?.inFlightSince, message?.dueAt]),
      ids.map(() => ["sent", undefined, undefined]),
    );
    // Each with the provider's id for it.
    assert.deepEqual(
      ids.map((id) => stored.find((message) => message.id === id)?.providerMessageId),
      ids.map((id) => provider.sms.sent.find((sent) => sent.idempotencyKey === id)?.providerMessageId),
    );
    await t.stop();
  });

  it("the failed attempts answered together that wait for their next commit in one statement", async () => {
    const { t, provider, ids, delivered } = await kitWithTexts(TEXTS);
    provider.sms.failNext(...ids.map(() => new SmsSendError("unavailable", "the provider is down for maintenance")));
    const statements = await statementsOf(async () => {
      provider.answerAll();
      await delivered;
    });
    const outcomes = firstTransaction(statements).slice(1, -1);
    assert.equal(outcomes.length, 1, outcomes.join("\n"));
    const stored = await t.kit.outbox.list();
    assert.deepEqual(
      stored.map((message) => [message.status, message.attempts, message.reason, message.dueAt! > t.clock.now()]),
      ids.map(() => ["queued", 1, "the provider is down for maintenance", true]),
    );
    await t.stop();
  });

  it("a text erased meanwhile stays erased, one a receipt overtook keeps its later status, and each move is announced once", async () => {
    const { t, provider, ids, delivered } = await kitWithTexts(4);
    const messages = t.kit.storage.collection<OutboxMessage>(OUTBOX_COLLECTION);
    // The first text's number is erased while it is at the provider; the second's receipt arrives before its send's answer.
    await messages.delete(ids[0]!);
    await messages.update(ids[1]!, { status: "delivered", providerMessageId: "early-receipt", inFlightSince: undefined, dueAt: undefined });
    const announced: Array<[string, string]> = [];
    t.kit.events.on("message.status_changed", (event) => void announced.push([event.messageId, event.status]));
    provider.answerAll();
    await delivered;
    assert.equal(await messages.get(ids[0]!), undefined);
    const [, overtaken, ...others] = await Promise.all(ids.map((id) => messages.get(id)));
    assert.deepEqual([overtaken?.status, overtaken?.providerMessageId], ["delivered", "early-receipt"]);
    assert.deepEqual(
      others.map((message) => [message?.status, message?.providerMessageId?.startsWith("mem-")]),
      [
        ["sent", true],
        ["sent", true],
      ],
    );
    assert.deepEqual(announced.sort(), ids.slice(2).map((id) => [id, "sent"]).sort());
    await t.stop();
  });
});
