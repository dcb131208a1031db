import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { describe, it } from "node:test";
import type { OutboxMessage, Storage } from "../../src/index.ts";
import { memoryStorage } from "../../adapters/storage/memory/index.ts";
import { memorySms, type MemorySms } from "../../adapters/sms/memory/index.ts";
import { OUTBOX_COLLECTION } from "../../src/messaging/outbox-record.ts";
import { withCollectionMethod, wrapStorage } from "../support/storage-wrappers.ts";
import { startTestKit } from "../support/test-kit.ts";

const TEXTS = 8;

/** `storage` with its transactions run by `transaction`, its outbox telling `observe` of each call before it runs. */
function observedOutbox(storage: Storage, transaction: Storage["transaction"], observe: (method: string, args: unknown[]) => void): Storage {
  return wrapStorage(storage, {
    transaction,
    collection(name) {
      const handle = storage.collection<OutboxMessage>(name);
      if (name !== OUTBOX_COLLECTION) return handle as never;
      return new Proxy(handle, {
        get(target, property) {
          const value = Reflect.get(target, property) as unknown;
          if (typeof value !== "function") return value;
          return (...args: unknown[]) => {
            observe(String(property), args);
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      }) as never;
    },
  });
}

/** The ids an in-flight mark (one statement for a page's messages) writes, if the call is one. */
const inFlightMarkOf = (method: string, args: unknown[]): string[] | undefined => {
  const patch = args[1] as Partial<OutboxMessage> | undefined;
  if (method !== "updateWhere" || patch?.attempts === undefined) return undefined;
  return (args[0] as { id: { in: string[] } }).id.in;
};

describe("a batch of deliveries", () => {
  it("a page of a sender's texts is read in one query and marked in flight in one write, committed before the first leaves, and leaves in order", async () => {
    const storage = memoryStorage();
    /** What the outbox was asked, in order: its reads and its in-flight marks, each with the transaction it ran in. */
    const calls: string[] = [];
    let transactions = 0;
    /** The outermost transaction the caller runs in, numbered. */
    const transaction = new AsyncLocalStorage<number>();
    const observed = observedOutbox(
      storage,
      (fn) => {
        const id = ++transactions;
        return storage.transaction(() => (transaction.getStore() === undefined ? transaction.run(id, fn) : fn()));
      },
      (method, args) => {
        if (method === "get" || method === "find") calls.push(method);
        if (inFlightMarkOf(method, args)) calls.push(`in flight ${inFlightMarkOf(method, args)!.length} (transaction ${transaction.getStore() ?? "none"})`);
      },
    );
    const memory = memorySms();
    /** The stored messages when the first text left. */
    let storedAtFirstSend: OutboxMessage[] | undefined;
    const sms: MemorySms = {
      ...memory,
      async send(message) {
        if (!storedAtFirstSend) {
          calls.push("first send");
          storedAtFirstSend = (await storage.collection<OutboxMessage>(OUTBOX_COLLECTION).find({})).items;
        }
        return memory.send(message);
      },
    };
    const t = await startTestKit({ storage: observed, sms, config: { messaging: { ratePerSecond: Infinity } } });
    for (let i = 1; i <= TEXTS; i++) await t.kit.outbox.send({ companyId: t.company.companyId, to: `+1555555030${i}`, body: `text ${i}`, kind: "test" });
    calls.length = 0;
    await t.scheduler.flush();
    const beforeFirstSend = calls.slice(0, calls.indexOf("first send"));
    assert.equal(beforeFirstSend.filter((call) => call === "find" || call === "get").length, 1, `one read: ${beforeFirstSend.join(", ")}`);
    const marks = beforeFirstSend.filter((call) => call.startsWith("in flight"));
    assert.deepEqual(marks.length, 1, `one write: ${marks.join(", ")}`);
    assert.ok(marks[0]!.startsWith(`in flight ${TEXTS} `), `every text marked before the first left: ${marks[0]}`);
    assert.ok(!marks[0]!.includes("none"), "in a transaction");
    assert.deepEqual(storedAtFirstSend?.map((message) => [message.attempts, message.inFlightSince !== undefined]), Array.from({ length: TEXTS }, () => [1, true]));
    assert.deepEqual(t.sms.sent.map((message) => message.body), Array.from({ length: TEXTS }, (_, i) => `text ${i + 1}`));
    assert.deepEqual((await t.kit.outbox.list()).map((message) => [message.status, message.inFlightSince]), Array.from({ length: TEXTS }, () => ["sent", undefined]));
    await t.stop();
  });

  it("a page whose in-flight mark fails sends none of its texts; their drain tries again and each text goes once, in order", async () => {
    let failMarks = true;
    const storage = withCollectionMethod(memoryStorage(), "updateWhere", (updateWhere, collection) =>
      collection !== OUTBOX_COLLECTION
        ? updateWhere
        : async (where, patch) => {
            if (failMarks && (patch as Partial<OutboxMessage>).inFlightSince !== undefined) throw new Error("disk I/O error");
            return updateWhere(where, patch);
          },
    );
    const t = await startTestKit({ storage, config: { messaging: { ratePerSecond: Infinity } } });
    for (let i = 1; i <= 3; i++) await t.kit.outbox.send({ companyId: t.company.companyId, to: `+1555555031${i}`, body: `text ${i}`, kind: "test" });
    await t.scheduler.flush();
    assert.equal(t.sms.sent.length, 0, "nothing leaves without its mark");
    assert.deepEqual((await t.kit.outbox.list()).map((message) => [message.status, message.attempts, message.inFlightSince]), Array.from({ length: 3 }, () => ["queued", 0, undefined]));
    failMarks = false;
    await t.scheduler.advance(10 * 60_000);
    assert.deepEqual(t.sms.sent.map((message) => message.body), ["text 1", "text 2", "text 3"]);
    assert.deepEqual((await t.kit.outbox.list()).map((message) => [message.status, message.attempts]), Array.from({ length: 3 }, () => ["sent", 1]));
    await t.stop();
  });

  it("the in-flight mark of a page commits with the outcomes of the texts answered meanwhile: one commit for both", async () => {
    const storage = memoryStorage();
    /** For each outermost transaction, the outbox's writes in it: a text marked in flight, or moved to sent. */
    const commits: string[][] = [];
    const current = new AsyncLocalStorage<string[]>();
    /** Answers a text held at the provider. */
    const answers = new Map<string, () => void>();
    const memory = memorySms();
    let answerDuringRead: string | undefined;
    let pageReads = 0;
    const observed = observedOutbox(
      storage,
      (fn) => {
        if (current.getStore()) return storage.transaction(fn);
        const writes: string[] = [];
        commits.push(writes);
        return storage.transaction(() => current.run(writes, fn));
      },
      (method, args) => {
        // The page of the fifth text (the drain's second) is read while the second is at the provider: it answers now.
        if (method === "find" && JSON.stringify(args[0]).includes("dueAt") && ++pageReads === 2 && answerDuringRead !== undefined) {
          answers.get(answerDuringRead)?.();
          answerDuringRead = undefined;
        }
        if (method === "update" && (args[1] as Partial<OutboxMessage>).status === "sent") current.getStore()?.push(`sent ${bodyOf.get(String(args[0]))}`);
        // A text answered beside others moves to sent without a read.
        if (method === "updateWhere" && (args[1] as Partial<OutboxMessage>).status === "sent") current.getStore()?.push(`sent ${bodyOf.get(String((args[0] as { id: string }).id))}`);
        for (const id of inFlightMarkOf(method, args) ?? []) current.getStore()?.push(`in flight ${bodyOf.get(id)}`);
      },
    );
    const sms: MemorySms = {
      ...memory,
      async send(message) {
        await new Promise<void>((answer) => answers.set(message.body, answer));
        return memory.send(message);
      },
    };
    const bodyOf = new Map<string, string>();
    const sent: string[] = [];
    // Two texts at the provider at once, pages of four.
    const t = await startTestKit({ storage: observed, sms, config: { messaging: { ratePerSecond: Infinity, sendsAtOnce: 2 } } });
    for (let i = 1; i <= 6; i++) {
      const message = await t.kit.outbox.send({ companyId: t.company.companyId, to: `+1555555032${i}`, body: `text ${i}`, kind: "test" });
      bodyOf.set(message.id, message.body);
      sent.push(message.id);
    }
    commits.length = 0;
    const delivered = t.scheduler.flush();
    while (!answers.has("text 1") || !answers.has("text 2")) await new Promise((resolve) => setImmediate(resolve));
    // The first answer makes room in the sender's queue, so the next page is read; the second answers while it is.
    answerDuringRead = "text 2";
    answers.get("text 1")!();
    for (const body of ["text 3", "text 4", "text 5", "text 6"]) {
      while (!answers.has(body)) await new Promise((resolve) => setImmediate(resolve));
      answers.get(body)!();
    }
    await delivered;
    assert.deepEqual((await t.kit.outbox.list()).map((message) => [message.body, message.status, message.attempts]), sent.map((_, i) => [`text ${i + 1}`, "sent", 1]));
    const written = commits.filter((writes) => writes.length > 0);
    assert.ok(
      written.some((writes) => writes.includes("in flight text 5") && writes.includes("sent text 2")),
      `the fifth text's mark commits with the second's outcome: ${JSON.stringify(written)}`,
    );
    await t.stop();
  });
});
