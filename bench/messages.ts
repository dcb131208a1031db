// Transactional messages and privacy purges, in process on SQLite, each figure beside a bare better-sqlite3
// baseline doing the same reads and writes, measured in alternation in the same run:
//   1. POST /1/messages accepted and dispatched to the memory SMS adapter per second, rate limits lifted
//      (the request through the kit's HTTP pipeline: legacy token, validation, phone reading, eligibility,
//      prefix, duplicate check, outbox row and send job; the job runner delivering at the same time),
//   2. the same with the outbox's per-sender limit at 100 messages per second: what the provider receives,
//      per second and in any sliding one-second window (must stay at or under 100),
//   3. a privacy purge (POST /v1/privacy/delete-request, processing at once) of a subscriber with 10,000
//      stored messages among 90,000 of other subscribers: from the request to the job's end.
// Usage: npm run bench:messages [-- messages-per-round]
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import Database from "better-sqlite3";
import { nodeScheduleScheduler } from "../adapters/scheduler/node-schedule/index.ts";
import { memorySms } from "../adapters/sms/memory/index.ts";
import { sqliteStorage } from "../adapters/storage/sqlite/index.ts";
import { accountsPlugin } from "../plugins/accounts/index.ts";
import { legacyPlugin } from "../plugins/legacy/index.ts";
import { privacyPlugin } from "../plugins/privacy/index.ts";
import { subscriptionsPlugin } from "../plugins/subscriptions/index.ts";
import { createReachkit, silentLogger, type OutboxMessage, type Reachkit } from "../src/index.ts";
import { sortableId } from "../src/kernel/ids.ts";
import { OUTBOX_COLLECTION } from "../src/messaging/outbox-record.ts";
import { seedSubscribers } from "./seed.ts";
import { bareCredentials } from "./servers/bare-handlers.ts";
import { indexedStatement, rowInserter } from "./servers/baseline-sql.ts";
import { report } from "./support.ts";
import { temporaryDirectory } from "../test/support/temp-dir.ts";

const MESSAGES = Number(process.argv[2] ?? 3000);
const ROUNDS = 3;
const IN_FLIGHT = 32;
const SUBSCRIBER_COUNT = 1000;
const LIMITED_RATE = 100;
const LIMITED_MESSAGES = 500;
const PURGED_MESSAGES = 10_000;
const OTHER_MESSAGES = 90_000;
const secret = "bench-secret-bench-secret-bench-secret-0";
const phoneOf = (i: number) => `+1914${String(5_550_000 + i).padStart(7, "0")}`;

interface Kit {
  kit: Reachkit;
  /** Its SQLite file. */
  file: string;
  companyId: string;
  legacyToken: string;
  apiKey: string;
  sentAt: number[];
}

/** A kit on a fresh SQLite file with the real scheduler and a memory SMS adapter that notes when each text leaves. */
async function startKit(ratePerSecond: number): Promise<Kit> {
  const sms = memorySms();
  const sentAt: number[] = [];
  const send = sms.send.bind(sms);
  // When the provider is called, in milliseconds as providers count their rate limits.
  sms.send = (message) => {
    sentAt.push(Date.now());
    return send(message);
  };
  const file = join(temporaryDirectory("bench-messages"), "reachkit.db");
  const kit = createReachkit({
    storage: sqliteStorage({ filename: file }),
    scheduler: nodeScheduleScheduler(),
    sms,
    logger: silentLogger(),
    secret,
    plugins: [accountsPlugin(), subscriptionsPlugin(), legacyPlugin(), privacyPlugin()],
    config: { rateLimits: { default: Infinity }, messaging: { ratePerSecond } },
  });
  await kit.start();
  const { output, company } = await kit.provisionCompany({ name: "Bench Co" });
  await seedSubscribers(kit.storage, company.id, SUBSCRIBER_COUNT, phoneOf);
  return { kit, file, companyId: company.id, legacyToken: output.legacyToken as string, apiKey: output.apiKey as string, sentAt };
}

/** Runs `work(i)` for i in [0, count) with `IN_FLIGHT` at a time. */
async function pool(count: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}

let messageRound = 0;
/** Posts `count` distinct messages to the kit's subscribers; the times until all were accepted and all delivered. */
async function sendMessages(k: Kit, count: number): Promise<{ acceptSeconds: number; dispatchSeconds: number }> {
  const round = ++messageRound;
  const deliveredBefore = k.sentAt.length;
  const started = performance.now();
  await pool(count, async (i) => {
    const response = await k.kit.inject({
      method: "POST",
      url: "/1/messages",
      headers: { authorization: `Bearer ${k.legacyToken}` },
      body: { to: phoneOf(i % SUBSCRIBER_COUNT), body: `Round ${round}: order ${i} has shipped.`, type: "TRANSACTIONAL" },
    });
    if (response.status !== 200) throw new Error(`POST /1/messages answered ${response.status}: ${response.body}`);
  });
  const accepted = performance.now();
  await until(() => k.sentAt.length - deliveredBefore >= count);
  return { acceptSeconds: (accepted - started) / 1000, dispatchSeconds: (performance.now() - started) / 1000 };
}

/**
 * A fresh database of the kit's schema (its tables, indexed columns and indexes), company and subscribers,
 * for a baseline to read and write with plain SQL.
 */
async function baselineDatabase(): Promise<{ db: Database.Database; companyId: string; legacyToken: string }> {
  const { kit, file, companyId, legacyToken } = await startKit(Infinity);
  await kit.stop();
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  return { db, companyId, legacyToken };
}

/**
 * The baseline: the same reads and writes with better-sqlite3, synchronously, one message after the other:
 * the credential, the subscription, the company and its prefix, the duplicate check, then the outbox row
 * (queued, due now: its sender's drain reads it) in one transaction, the in-flight mark (attempted, due
 * again a minute later) in another, the text handed over, and the message sent (due no more) in a third.
 */
async function bareMessages(count: number): Promise<{ acceptSeconds: number; dispatchSeconds: number }> {
  const { db, legacyToken } = await baselineDatabase();
  const credentialOf = bareCredentials(db);
  const subscription = indexedStatement(db, `SELECT doc FROM subscriptions_subscriptions WHERE "f_companyId" = ? AND "f_channel" = 'TEXT' AND "f_address" = ?`).pluck();
  const companyById = indexedStatement(db, "SELECT doc FROM accounts_companies WHERE id = ?").pluck();
  const prefixOf = indexedStatement(db, "SELECT doc FROM legacy_message_prefixes WHERE id = ?").pluck();
  const recent = indexedStatement(db, `SELECT doc FROM reachkit_outbox WHERE "f_companyId" = ? AND "f_to" = ? AND "f_createdAt" >= ?`).pluck();
  const insertMessage = rowInserter<OutboxMessage>(db, OUTBOX_COLLECTION);
  // Status and attempts of a message are not indexed: its document and its due time change.
  const updateMessage = indexedStatement(db, `UPDATE reachkit_outbox SET doc = ?, "f_dueAt" = ? WHERE id = ?`);
  const accept = db.transaction((message: OutboxMessage) => insertMessage(message));
  const record = db.transaction((message: OutboxMessage) => {
    updateMessage.run(JSON.stringify(message), message.dueAt === undefined ? null : BigInt(message.dueAt), message.id);
  });
  const delivered: string[] = [];
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const text = JSON.stringify({ to: phoneOf(i % SUBSCRIBER_COUNT), body: `Order ${i} has shipped.`, type: "TRANSACTIONAL" });
    const input = JSON.parse(text) as { to: string; body: string; type: string };
    const principal = credentialOf(`Bearer ${legacyToken}`)!;
    if (input.type !== "TRANSACTIONAL" || !/^\+1\d{10}$/.test(input.to)) throw new Error("invalid");
    const found = subscription.get(principal.companyId, input.to) as string | undefined;
    if (!found || (JSON.parse(found) as { state: string }).state !== "active") throw new Error("not subscribed");
    const company = JSON.parse(companyById.get(principal.companyId) as string) as { name: string; senderNumber: string };
    const prefix = prefixOf.get(principal.companyId) as string | undefined;
    const template = prefix === undefined ? "{company}: " : (JSON.parse(prefix) as { template: string }).template;
    const now = Date.now();
    const body = `${template.replace("{company}", company.name)}${input.body}`;
    const duplicate = (recent.all(principal.companyId, input.to, now - 300_000) as string[]).some((doc) => (JSON.parse(doc) as { body: string }).body === body);
    if (duplicate) throw new Error("duplicate");
    const id = sortableId(now);
    const message: OutboxMessage = {
      id, companyId: principal.companyId, to: input.to, from: company.senderNumber, body, kind: "transactional", status: "queued",
      idempotencyKey: id, attempts: 0, createdAt: now, updatedAt: now, dueAt: now,
    };
    accept(message);
    record({ ...message, attempts: 1, inFlightSince: now, dueAt: now + 60_000 });
    delivered.push(message.body);
    const sentAt = Date.now();
    record({ ...message, attempts: 1, status: "sent", sentAt, updatedAt: sentAt, dueAt: undefined });
  }
  const seconds = (performance.now() - started) / 1000;
  db.close();
  return { acceptSeconds: seconds, dispatchSeconds: seconds };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const perSecond = (count: number, seconds: number) => Math.round(count / seconds);

// 1. Throughput, rate limits lifted.
const unlimited = await startKit(Infinity);
await sendMessages(unlimited, 300); // warm-up
const rounds = { reachkitAccepted: [] as number[], reachkitDispatched: [] as number[], bare: [] as number[] };
for (let round = 0; round < ROUNDS; round++) {
  rounds.bare.push(perSecond(MESSAGES, (await bareMessages(MESSAGES)).dispatchSeconds));
  const measured = await sendMessages(unlimited, MESSAGES);
  rounds.reachkitAccepted.push(perSecond(MESSAGES, measured.acceptSeconds));
  rounds.reachkitDispatched.push(perSecond(MESSAGES, measured.dispatchSeconds));
}
await unlimited.kit.stop();

// 2. With the outbox's per-sender limit.
const limited = await startKit(LIMITED_RATE);
const limitedRun = await sendMessages(limited, LIMITED_MESSAGES);
const times = limited.sentAt;
const first = times[0]!;
const secondsUsed = Math.ceil((times.at(-1)! - first + 1) / 1000);
const perWholeSecond = Array.from({ length: secondsUsed }, (_, k) => times.filter((t) => t >= first + k * 1000 && t < first + (k + 1) * 1000).length);
let maxInAnySecond = 0;
for (let i = 0, j = 0; i < times.length; i++) {
  while (times[j]! <= times[i]! - 1000) j++;
  maxInAnySecond = Math.max(maxInAnySecond, i - j + 1);
}
await limited.kit.stop();

// 3. Privacy purge of a subscriber with 10,000 stored messages.
const purgeKit = await startKit(Infinity);
const subjectPhone = phoneOf(0);
const outbox = purgeKit.kit.storage.collection<OutboxMessage>(OUTBOX_COLLECTION);
const outboxMessage = (to: string, i: number): OutboxMessage => {
  const at = Date.now() - 1_000_000 + i;
  return { id: randomUUID(), companyId: purgeKit.companyId, to, from: "+15550000000", body: `Bench Co: message ${i}`, kind: "transactional", status: "sent", idempotencyKey: randomUUID(), attempts: 1, createdAt: at, updatedAt: at };
};
const seedOthers: OutboxMessage[] = [];
for (let i = 0; i < OTHER_MESSAGES; i++) seedOthers.push(outboxMessage(phoneOf(1 + (i % (SUBSCRIBER_COUNT - 1))), i));
await outbox.upsertMany(seedOthers);

async function reachkitPurge(): Promise<number> {
  await outbox.upsertMany(Array.from({ length: PURGED_MESSAGES }, (_, i) => outboxMessage(subjectPhone, i)));
  const done = new Promise<void>((resolve) => {
    const off = purgeKit.kit.events.on("privacy.request.processed", () => {
      off();
      resolve();
    });
  });
  const started = performance.now();
  const response = await purgeKit.kit.inject({
    method: "POST",
    url: "/v1/privacy/delete-request",
    headers: { authorization: `Bearer ${purgeKit.apiKey}` },
    body: { subjectPhone },
  });
  if (response.status !== 200) throw new Error(`privacy request answered ${response.status}: ${response.body}`);
  await done;
  const ms = performance.now() - started;
  if ((await outbox.count({ to: subjectPhone })) !== 0) throw new Error("messages left after the purge");
  return ms;
}

/** The baseline: the subject's messages, subscriptions and subscriber deleted with plain SQL through reachkit's indexes. */
async function barePurge(): Promise<number> {
  const { db, companyId } = await baselineDatabase();
  const insertMessage = rowInserter<OutboxMessage>(db, OUTBOX_COLLECTION);
  db.transaction(() => {
    for (const message of seedOthers) insertMessage({ ...message, companyId });
    for (let i = 0; i < PURGED_MESSAGES; i++) insertMessage({ ...outboxMessage(subjectPhone, i), companyId });
  })();
  const deletions = [
    `DELETE FROM reachkit_outbox WHERE "f_companyId" = ? AND "f_to" = ?`,
    `DELETE FROM subscriptions_subscriptions WHERE "f_companyId" = ? AND "f_channel" = 'TEXT' AND "f_address" = ?`,
    `DELETE FROM subscriptions_subscribers WHERE "f_companyId" = ? AND "f_phone" = ?`,
  ].map((sql) => indexedStatement(db, sql));
  const started = performance.now();
  const deleted = db.transaction(() => deletions.map((statement) => statement.run(companyId, subjectPhone).changes))();
  const ms = performance.now() - started;
  if (deleted[0] !== PURGED_MESSAGES || deleted[1] !== 1 || deleted[2] !== 1) throw new Error(`bare purge deleted ${deleted.join(", ")} rows`);
  db.close();
  return ms;
}

const purges = { reachkitMs: [] as number[], bareMs: [] as number[] };
for (let round = 0; round < ROUNDS; round++) {
  purges.bareMs.push(Math.round(await barePurge()));
  purges.reachkitMs.push(Math.round(await reachkitPurge()));
}
await purgeKit.kit.stop();

report("messages", {
  messagesPerRound: MESSAGES,
  inFlight: IN_FLIGHT,
  rounds: ROUNDS,
  unlimited: {
    request: "POST /1/messages in process (kit.inject), SQLite, memory SMS, rate limits lifted, job runner delivering meanwhile",
    acceptedPerSecond: median(rounds.reachkitAccepted),
    dispatchedPerSecond: median(rounds.reachkitDispatched),
    bareMessagesPerSecond: median(rounds.bare),
    dispatchRatio: Math.round((median(rounds.reachkitDispatched) / median(rounds.bare)) * 100) / 100,
    rounds,
  },
  limited: {
    limitPerSecond: LIMITED_RATE,
    messages: LIMITED_MESSAGES,
    acceptSeconds: Math.round(limitedRun.acceptSeconds * 100) / 100,
    dispatchSeconds: Math.round(limitedRun.dispatchSeconds * 100) / 100,
    deliveredPerWholeSecond: perWholeSecond,
    maxDeliveredInAnySlidingSecond: maxInAnySecond,
    note: "the limiter (p-queue, strict sliding window) counts a send when it starts it, in Date.now() milliseconds; the adapter notes the call in the same clock, up to 1 ms later",
  },
  privacyPurge: {
    request: `POST /v1/privacy/delete-request, processed at once: ${PURGED_MESSAGES} messages of the subject among ${OTHER_MESSAGES} others, plus the subscriber`,
    reachkitMedianMs: median(purges.reachkitMs),
    bareDeleteMedianMs: median(purges.bareMs),
    ...purges,
  },
});
