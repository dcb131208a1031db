// One phase of bench/reminders.ts, in a process of its own so that memory and start-up are measured cleanly.
// Prints one line `RESULT <json>`. Run with --expose-gc.
//   create <dataDir> <count> <concurrency> <ratePerSecond>   reachkit: company, type, then <count> reminders over 30 days
//   start <dataDir>                                           reachkit: time for a fresh kit to start on the database
//   lateness <dataDir> <burst> <concurrency> <ratePerSecond> <instant|minute>
//                                                             reachkit: <burst> reminders due at one instant, or spread evenly over one minute
//   bare-create <dataDir> <count>                             baseline: JSON.parse + better-sqlite3 inserts of the same rows and columns
//   timers <count>                                            baseline: one node-schedule timer per pending send
//   bare-lateness <burst>                                     baseline: <burst> node-schedule timers at the same instant
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import Database from "better-sqlite3";
import { DateTime } from "luxon";
import schedule from "node-schedule";
import { memoryObjectStorage } from "../adapters/object-storage/memory/index.ts";
import { nodeScheduleScheduler } from "../adapters/scheduler/node-schedule/index.ts";
import { sqliteStorage } from "../adapters/storage/sqlite/index.ts";
import { serverPlugins } from "../server/server-kit.ts";
import { REMINDERS } from "../plugins/appointments/records.ts";
import { createReachkit, silentLogger, type JobRecord, type OutboundSms, type OutboxMessage, type Reachkit, type SmsSender } from "../src/index.ts";
import { JOBS_COLLECTION } from "../src/jobs/job-record.ts";
import { sortableId } from "../src/kernel/ids.ts";
import { OUTBOX_COLLECTION } from "../src/messaging/outbox-record.ts";
import { rowInserter } from "./servers/baseline-sql.ts";

const SECRET = "bench-secret-bench-secret-bench-secret-0";
const DAY = 86_400_000;
const HOUR = 3_600_000;
/** In-flight create requests: storage transactions serialise anyway; this overlaps parsing and validation. */
const CREATE_CONCURRENCY = 16;

/** An SMS provider that keeps only when each number was sent to, so memory stays flat. */
function countingSms(): SmsSender & { sent: number; sentAt: Map<string, number> } {
  const sender = {
    name: "bench",
    sent: 0,
    sentAt: new Map<string, number>(),
    async send(message: OutboundSms) {
      sender.sent++;
      if (message.to.startsWith("+1777")) sender.sentAt.set(message.to, Date.now());
      return { providerMessageId: message.idempotencyKey };
    },
  };
  return sender;
}

function benchKit(dataDir: string, concurrency: number, ratePerSecond: number, sms: SmsSender): Reachkit {
  return createReachkit({
    storage: sqliteStorage({ filename: join(dataDir, "reachkit.db") }),
    scheduler: nodeScheduleScheduler(),
    sms,
    // The server's plugins include the catalog, which needs object storage; nothing is uploaded here.
    objectStorage: memoryObjectStorage(),
    logger: silentLogger(),
    secret: SECRET,
    plugins: serverPlugins(),
    // Rate limits lifted: one client token creates every reminder.
    config: { jobs: { concurrency }, messaging: { ratePerSecond }, rateLimits: { default: Infinity } },
  });
}

/** Queued REMINDER and FOLLOW_UP jobs, counted in the database. */
function pendingStepJobs(kit: Reachkit): Promise<number> {
  return kit.storage.collection<JobRecord>("reachkit_jobs").count({ type: "appointments.send-step", status: "queued" });
}

function memory(): { rssMb: number; heapUsedMb: number } {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  const usage = process.memoryUsage();
  return { rssMb: Math.round(usage.rss / 1e5) / 10, heapUsedMb: Math.round(usage.heapUsed / 1e5) / 10 };
}

const percentile = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/** Runs `count` tasks, `concurrency` at a time. */
async function inParallel(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

/** The i-th of `count` reminders: spread evenly over 30 days from tomorrow, a wall-clock time in New York. */
function reminderBody(eventType: string, i: number, count: number, now: number) {
  const at = now + DAY + Math.floor((i * 30 * DAY) / Math.max(count, 1));
  return {
    eventType: { uuid: eventType },
    phone: `+1555${String(i).padStart(7, "0")}`,
    firstName: "Ada",
    externalEventId: `appt-${i}`,
    eventDateTime: DateTime.fromMillis(at, { zone: "America/New_York" }).toFormat("yyyy-MM-dd'T'HH:mm"),
    subscriberTimeZone: "America/New_York",
    remindTimeOffset: "PT3H",
    followUpTimeOffset: "PT24H",
    metadata: { service: "haircut" },
  };
}

async function create(dataDir: string, count: number, concurrency: number, rate: number) {
  const sms = countingSms();
  const kit = benchKit(dataDir, concurrency, rate, sms);
  await kit.start();
  const { output, company } = await kit.provisionCompany({ name: "Bench Co" });
  const appointments = kit.plugin("appointments");
  const { uuid: eventType } = await appointments.types.create(company.id, { type: "Haircut" });
  for (const [messageType, text] of [
    ["CONFIRMATION", "Hi {firstName}, your {service} is booked for {eventDate} at {eventTime}."],
    ["REMINDER", "Reminder: {service} at {eventTime} today."],
    ["FOLLOW_UP", "Thanks for coming, {firstName}!"],
  ]) {
    await appointments.messages.create(company.id, { eventType: { uuid: eventType }, messageType, text });
  }
  const headers = { authorization: `Bearer ${output.legacyToken as string}` };
  const before = memory();
  const now = Date.now();
  const started = performance.now();
  let failures = 0;
  await inParallel(count, CREATE_CONCURRENCY, async (i) => {
    const response = await kit.inject({ method: "POST", url: "/events/reminders", headers, body: reminderBody(eventType, i, count, now) });
    if (response.status !== 200) failures++;
  });
  const createSeconds = (performance.now() - started) / 1000;
  const drained = await until(() => sms.sent >= count, 30 * 60_000);
  const drainSeconds = (performance.now() - started) / 1000;
  const after = memory();
  const pendingSends = await pendingStepJobs(kit);
  await kit.stop();
  return {
    count,
    failures,
    createSeconds: round(createSeconds),
    remindersPerSecond: Math.round(count / createSeconds),
    confirmationsSent: sms.sent,
    allConfirmationsSentAfterSeconds: drained ? round(drainSeconds) : null,
    pendingSends,
    before,
    after,
    rssGrowthMb: round(after.rssMb - before.rssMb),
    companyId: company.id,
    legacyToken: output.legacyToken,
  };
}

async function start(dataDir: string) {
  const began = performance.now();
  const kit = benchKit(dataDir, 4, 10, countingSms());
  await kit.start();
  const startMs = performance.now() - began;
  // From the process's birth: Node, tsx and every module loaded, then the kit built and started.
  const sinceProcessStartMs = performance.now();
  const pending = await pendingStepJobs(kit);
  const after = memory();
  await kit.stop();
  return { startMs: Math.round(startMs), sinceProcessStartMs: Math.round(sinceProcessStartMs), pendingSends: pending, after };
}

async function lateness(dataDir: string, burst: number, concurrency: number, rate: number, spread: "instant" | "minute") {
  const sms = countingSms();
  const kit = benchKit(dataDir, concurrency, rate, sms);
  await kit.start();
  const company = (await kit.plugin("accounts").listCompanies())[0]!;
  const appointments = kit.plugin("appointments");
  const { uuid: eventType } = await appointments.types.create(company.id, { type: "Burst" });
  await appointments.messages.create(company.id, { eventType: { uuid: eventType }, messageType: "REMINDER", text: "Reminder: {service} at {eventTime}." });
  // The minute starts on a whole minute at least 20 s ahead: appointments at the top of the hour, reminded PT3H before.
  const minute = Math.ceil((Date.now() + 20_000) / 60_000) * 60_000;
  const dueAt = (i: number) => (spread === "instant" ? minute : minute + Math.floor((i * 60_000) / burst));
  const phoneOf = (i: number) => `+1777${String(i).padStart(7, "0")}`;
  const createStarted = performance.now();
  await inParallel(burst, CREATE_CONCURRENCY, async (i) => {
    await appointments.reminders.create(company.id, {
      eventType: { uuid: eventType },
      phone: phoneOf(i),
      eventDateTime: new Date(dueAt(i) + 3 * HOUR).toISOString(),
      subscriberTimeZone: "America/New_York",
      metadata: { service: "haircut" },
    });
  });
  const createSeconds = (performance.now() - createStarted) / 1000;
  const slack = minute - Date.now();
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, minute - Date.now())));
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  await until(() => sms.sentAt.size >= burst, 10 * 60_000);
  const cpu = process.cpuUsage(cpuBefore);
  const late = Array.from({ length: burst }, (_, i) => sms.sentAt.get(phoneOf(i)))
    .flatMap((at, i) => (at === undefined ? [] : [at - dueAt(i)]))
    .sort((a, b) => a - b);
  await kit.stop();
  return {
    burst,
    spread,
    concurrency,
    ratePerSecond: rate,
    createSeconds: round(createSeconds),
    createdAheadMs: slack,
    // CPU used by the process from the first due time until the last send: the machine's share, not reachkit's alone.
    cpuPercentWhileSending: Math.round(((cpu.user + cpu.system) / 1000 / (performance.now() - wallBefore)) * 100),
    ...latenessFigures(late, burst),
  };
}

function latenessFigures(late: number[], expected: number) {
  return {
    sent: late.length,
    missing: expected - late.length,
    p50Ms: percentile(late, 50),
    p99Ms: percentile(late, 99),
    maxMs: late[late.length - 1],
  };
}

/**
 * The baseline: the rows reachkit writes for each reminder (the reminder, its REMINDER and FOLLOW_UP jobs,
 * the confirmation's outbox row and send job), with their indexed columns, on a database of reachkit's
 * schema, one transaction each, JSON.parse of the request and no checks.
 */
async function bareCreate(dataDir: string, count: number) {
  const bareDir = join(dataDir, "bare");
  mkdirSync(bareDir, { recursive: true });
  // A kit declares the tables, columns and indexes, then leaves the file to plain SQL.
  const schema = benchKit(bareDir, 1, 1, countingSms());
  await schema.start({ runJobs: false });
  await schema.stop();
  const db = new Database(join(bareDir, "reachkit.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  const insert = {
    reminder: rowInserter<{ id: string } & Record<string, unknown>>(db, REMINDERS),
    job: rowInserter<JobRecord>(db, JOBS_COLLECTION),
    message: rowInserter<OutboxMessage>(db, OUTBOX_COLLECTION),
  };
  const companyId = "bench-company";
  const job = (key: string | null, runAt: number, now: number, payload: unknown): JobRecord => ({
    id: sortableId(now), type: "appointments.send-step", key, activeKey: key, companyId, payload,
    status: "queued", runAt, attempts: 0, maxAttempts: 5, leaseUntil: null, lastError: null, createdAt: now, updatedAt: now, finishedAt: null,
  });
  const write = db.transaction((text: string, i: number) => {
    const body = JSON.parse(text) as ReturnType<typeof reminderBody>;
    const now = Date.now();
    const id = `r${i}`;
    const eventAt = now + DAY;
    const messageId = sortableId(now);
    insert.reminder({
      id, companyId, ...body, eventTypeId: body.eventType.uuid, eventAt, externalEventKey: body.externalEventId, state: "scheduled",
      steps: { REMINDER: { status: "scheduled", sendAt: eventAt - 3 * HOUR }, FOLLOW_UP: { status: "scheduled", sendAt: eventAt + DAY }, CONFIRMATION: { status: "queued", messageId } },
      createdAt: now, updatedAt: now,
    });
    for (const [step, runAt] of [["REMINDER", eventAt - 3 * HOUR], ["FOLLOW_UP", eventAt + DAY]] as const) {
      insert.job(job(`appointments:${id}:${step}`, runAt, now, { companyId, reminderId: id, step }));
    }
    insert.message({
      id: messageId, companyId, to: body.phone, from: "+15550000000", body: "Hi Ada", kind: "appointment_confirmation", status: "queued",
      idempotencyKey: `appointments:${id}:CONFIRMATION:${eventAt}`, attempts: 0, createdAt: now, updatedAt: now, dueAt: now,
    });
    // No job row for the text: the sender's drain, queued once, sends every text of its sender.
  });
  const texts = Array.from({ length: count }, (_, i) => JSON.stringify(reminderBody("type", i, count, Date.now())));
  const before = memory();
  const started = performance.now();
  texts.forEach((text, i) => write(text, i));
  const seconds = (performance.now() - started) / 1000;
  const after = memory();
  db.close();
  return { count, seconds: round(seconds), remindersPerSecond: Math.round(count / seconds), before, after, rssGrowthMb: round(after.rssMb - before.rssMb) };
}

function timers(count: number) {
  const before = memory();
  const now = Date.now();
  const jobs = Array.from({ length: count }, (_, i) => schedule.scheduleJob(new Date(now + DAY + Math.floor((i * 30 * DAY) / count)), () => undefined));
  const after = memory();
  for (const job of jobs) job.cancel();
  return { timers: count, before, after, rssGrowthMb: round(after.rssMb - before.rssMb) };
}

async function bareLateness(burst: number) {
  const due = Math.ceil((Date.now() + 5_000) / 1000) * 1000;
  const sms = countingSms();
  for (let i = 0; i < burst; i++) {
    const message = { from: "+15550000000", to: `+1777${String(i).padStart(7, "0")}`, body: "Reminder", idempotencyKey: String(i) };
    schedule.scheduleJob(new Date(due), () => void sms.send(message));
  }
  await until(() => sms.sentAt.size >= burst, 60_000);
  const late = [...sms.sentAt.values()].map((at) => at - due).sort((a, b) => a - b);
  return { burst, ...latenessFigures(late, burst) };
}

const round = (value: number) => Math.round(value * 100) / 100;

const [phase, ...args] = process.argv.slice(2);
const number = (index: number) => Number(args[index]);
const phases: Record<string, () => unknown> = {
  create: () => create(args[0]!, number(1), number(2), number(3)),
  start: () => start(args[0]!),
  lateness: () => lateness(args[0]!, number(1), number(2), number(3), args[4] === "minute" ? "minute" : "instant"),
  "bare-create": () => bareCreate(args[0]!, number(1)),
  timers: () => timers(number(0)),
  "bare-lateness": () => bareLateness(number(0)),
};
const run = phases[phase ?? ""];
if (!run) throw new Error(`unknown phase ${phase}; one of ${Object.keys(phases).join(", ")}`);
console.log(`RESULT ${JSON.stringify(await run())}`);
process.exit(0);
