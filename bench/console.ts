// bench:console — the console's subscriber list and outbox pages with 1,000,000 subscribers and
// 1,000,000 messages in the self-hosted server's SQLite database: the time to answer each page
// (in process, through the kit's whole HTTP pipeline: session, keyset read, HTML), beside a baseline
// that reads the same 50 rows by the fastest plain means (a prepared better-sqlite3 statement on the
// same file, the same index) and renders them with one template string. Rounds alternate.
//   npm run bench:console                 1,000,000 subscribers
//   BENCH_CONSOLE_SUBSCRIBERS=100000 npm run bench:console
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { fakeClock } from "../adapters/clock/index.ts";
import { memoryObjectStorage } from "../adapters/object-storage/memory/index.ts";
import { manualScheduler } from "../adapters/scheduler/manual/index.ts";
import { memorySms } from "../adapters/sms/memory/index.ts";
import { sqliteStorage } from "../adapters/storage/sqlite/index.ts";
import { escapeHtml } from "../plugins/console/index.ts";
import { oauthPlugin, scryptPasswordHasher } from "../plugins/oauth/index.ts";
import { SUBSCRIBERS, type Subscriber } from "../plugins/subscriptions/records.ts";
import { serverPlugins } from "../server/server-kit.ts";
import { createReachkit, silentLogger, type OutboxMessage, type OutboxStatus } from "../src/index.ts";
import { OUTBOX_COLLECTION } from "../src/messaging/outbox-record.ts";
import { indexedStatement } from "./servers/baseline-sql.ts";
import { report } from "./support.ts";

const COUNT = Number(process.env.BENCH_CONSOLE_SUBSCRIBERS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_CONSOLE_ROUNDS ?? 40);
const CHUNK = 10_000;
const PASSWORD = "bench password 1";
const DAY = 86_400_000;

const directory = mkdtempSync(join(tmpdir(), "reachkit-bench-console-"));
const start = Date.parse("2026-03-01T12:00:00.000Z");
const clock = fakeClock(start);
const storage = sqliteStorage({ filename: join(directory, "reachkit.db"), cacheKiB: 4096 });
const kit = createReachkit({
  storage,
  scheduler: manualScheduler(clock),
  clock,
  sms: memorySms(),
  objectStorage: memoryObjectStorage({ clock }),
  logger: silentLogger(),
  secret: "bench-secret-bench-secret-bench-secret-01",
  plugins: serverPlugins().map((plugin) => (plugin.name === "oauth" ? oauthPlugin({ passwordHasher: scryptPasswordHasher({ N: 1024, r: 8, p: 1 }) }) : plugin)),
});
await kit.start();
const company = (await kit.provisionCompany({ name: "Big Company" })).company;
await kit.plugin("oauth").users.create({ companyId: company.id, email: "owner@big.example", password: PASSWORD });

const phoneOf = (i: number) => `+1312${String(i).padStart(7, "0")}`;
const STATUSES: OutboxStatus[] = ["delivered", "delivered", "delivered", "delivered", "delivered", "sent", "sent", "undelivered", "failed", "suppressed"];
const FAILURES: Partial<Record<OutboxStatus, Pick<OutboxMessage, "reason" | "errorCode">>> = {
  failed: { reason: "The 'To' number is not a valid phone number", errorCode: "21211" },
  undelivered: { reason: "Unknown destination handset", errorCode: "30005" },
};

// Seeding: direct bulk writes through the storage port, oldest first, spread over 90 days.
const seeded = performance.now();
const subscribers = storage.collection<Subscriber>(SUBSCRIBERS);
const outbox = storage.collection<OutboxMessage>(OUTBOX_COLLECTION);
for (let first = 0; first < COUNT; first += CHUNK) {
  const people: Subscriber[] = [];
  const texts: OutboxMessage[] = [];
  for (let i = first; i < Math.min(first + CHUNK, COUNT); i++) {
    const at = start - 90 * DAY + Math.floor((i * 90 * DAY) / COUNT);
    people.push({ id: `sub-${String(i).padStart(8, "0")}`, companyId: company.id, phone: phoneOf(i), ...(i % 2 === 0 ? { email: `person${i}@example.com` } : {}), firstName: "Pat", createdAt: at, updatedAt: at });
    const status = STATUSES[i % STATUSES.length]!;
    // One message in ten is an email (to a person who has an address).
    const email = i % 10 === 4;
    texts.push({
      id: `msg-${String(i).padStart(8, "0")}`,
      companyId: company.id,
      ...(email
        ? { channel: "email" as const, to: `person${i}@example.com`, from: "news@big.example", subject: `Your order ${i} has shipped` }
        : { channel: "sms" as const, to: phoneOf(i), from: "+15550000000" }),
      body: `Big Company: your order ${i} has shipped.`,
      kind: "transactional",
      status,
      ...FAILURES[status],
      ...(status === "delivered" ? { deliveredAt: at } : {}),
      idempotencyKey: `msg-${i}`,
      attempts: 1,
      createdAt: at,
      updatedAt: at,
    });
  }
  await subscribers.upsertMany(people);
  await outbox.upsertMany(texts);
}
const seedSeconds = (performance.now() - seeded) / 1000;
console.log(`seeded ${COUNT} subscribers and ${COUNT} messages in ${seedSeconds.toFixed(1)} s`);

// A signed-in browser.
const form = await kit.inject({ url: "/console/sign-in" });
const csrfCookie = /^([^;]+)/.exec(form.headers["set-cookie"]!)![1]!;
const token = /name="csrf_token" value="([^"]+)"/.exec(form.body)![1]!;
const signIn = await kit.inject({
  method: "POST",
  url: "/console/sign-in",
  headers: { cookie: csrfCookie, "content-type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams({ csrf_token: token, email: "owner@big.example", password: PASSWORD }).toString(),
});
const cookie = /^([^;]+)/.exec(signIn.headers["set-cookie"]!)![1]!;

/** A cursor in the middle of a list: the keyset of the item at the middle time, as the page before it would give. */
async function middleCursor(collection: typeof subscribers | typeof outbox, extra: object = {}): Promise<string> {
  const middle = start - 45 * DAY;
  const page = await (collection as typeof outbox).find({
    where: { companyId: company.id, createdAt: { lte: middle }, ...extra },
    orderBy: [{ field: "createdAt", direction: "desc" }, { field: "id", direction: "desc" }],
    limit: 1,
  });
  return page.nextCursor!;
}

const pages: Record<string, string> = {
  "subscribers, first page": "/console/subscribers",
  "subscribers, a middle page": `/console/subscribers?after=${await middleCursor(subscribers)}`,
  "subscribers, search by phone digits": "/console/subscribers?q=%2B1312000",
  "subscribers, search by email": "/console/subscribers?q=person5000",
  "a subscriber's page": `/console/subscriber?phone=${encodeURIComponent(phoneOf(Math.floor(COUNT / 2)))}`,
  "messages, first page": "/console/messages",
  "messages, a middle page": `/console/messages?after=${await middleCursor(outbox)}`,
  "messages, failed": "/console/messages?status=failed",
  "messages, failed, a middle page": `/console/messages?status=failed&after=${await middleCursor(outbox, { status: "failed" })}`,
  "messages, undelivered": "/console/messages?status=undelivered",
  "messages to one phone": `/console/messages?to=${encodeURIComponent(phoneOf(Math.floor(COUNT / 3)))}`,
  // Not in the 300 ms target: the overview counts every row of the period.
  "overview, 7 days": "/console?days=7",
  "overview, 90 days (every row)": "/console?days=90",
};

// The baseline: the same keyset reads on the same indexes, by a prepared statement, rendered by one template string.
const db = new Database(join(directory, "reachkit.db"), { readonly: true });
const subscriberRows = indexedStatement(
  db,
  `SELECT doc FROM "${SUBSCRIBERS}" WHERE "f_companyId" = ? AND ("f_createdAt" < ? OR ("f_createdAt" = ? AND id < ?)) ORDER BY "f_createdAt" DESC, id DESC LIMIT 51`,
);
const messageRows = indexedStatement(
  db,
  `SELECT doc FROM "${OUTBOX_COLLECTION}" WHERE "f_companyId" = ? AND ("f_createdAt" < ? OR ("f_createdAt" = ? AND id < ?)) ORDER BY "f_createdAt" DESC, id DESC LIMIT 51`,
);
function bareTable(rows: Array<{ doc: string }>, cells: (doc: Record<string, unknown>) => unknown[]): string {
  let html = "<!doctype html><table><tbody>";
  for (const row of rows) html += `<tr>${cells(JSON.parse(row.doc)).map((cell) => `<td>${escapeHtml(String(cell ?? ""))}</td>`).join("")}</tr>`;
  return `${html}</tbody></table>`;
}
const baselines: Record<string, () => string> = {
  "subscribers page": () => bareTable(subscriberRows.all(company.id, start + DAY, start + DAY, "") as Array<{ doc: string }>, (s) => [s.phone, s.email, s.firstName, s.createdAt]),
  "messages page": () => bareTable(messageRows.all(company.id, start + DAY, start + DAY, "") as Array<{ doc: string }>, (m) => [m.createdAt, m.to, m.channel, m.kind, m.status, m.errorCode, m.reason, m.subject, m.body]),
};

interface Timing {
  medianMs: number;
  p95Ms: number;
  maxMs: number;
  cpuMsPerPage: number;
}

function summary(wall: number[], cpu: number[]): Timing {
  const sorted = [...wall].sort((a, b) => a - b);
  const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 100) / 100;
  const cpuSorted = [...cpu].sort((a, b) => a - b);
  return { medianMs: at(0.5), p95Ms: at(0.95), maxMs: at(1), cpuMsPerPage: Math.round(cpuSorted[Math.floor(cpuSorted.length / 2)]! * 100) / 100 };
}

async function time(run: () => Promise<unknown> | unknown, wall: number[], cpu: number[]): Promise<void> {
  const cpuBefore = process.cpuUsage();
  const before = performance.now();
  await run();
  wall.push(performance.now() - before);
  const used = process.cpuUsage(cpuBefore);
  cpu.push((used.user + used.system) / 1000);
}

// Every page answers 200 before anything is timed (and warms the code).
for (const [name, url] of Object.entries(pages)) {
  for (let n = 0; n < 5; n++) {
    const answer = await kit.inject({ url, headers: { cookie } });
    if (answer.status !== 200) throw new Error(`${name}: ${answer.status} ${answer.body.slice(0, 300)}`);
    // A list page holds a whole page: 50 rows and the table's head.
    const rows = answer.body.match(/<tr>/g)?.length ?? 0;
    if (/page|failed$|undelivered$/.test(name) && !name.startsWith("a subscriber") && rows !== 51) throw new Error(`${name}: ${rows - 1} rows`);
  }
}
for (const run of Object.values(baselines)) for (let n = 0; n < 5; n++) run();

const loadBefore = loadavg();
const measured: Record<string, { wall: number[]; cpu: number[] }> = {};
const slot = (name: string) => (measured[name] ??= { wall: [], cpu: [] });
for (let round = 0; round < ROUNDS; round++) {
  // Alternated: every page, then every baseline, the order flipping each round.
  const steps: Array<[string, () => Promise<unknown> | unknown]> = [
    ...Object.entries(pages).map(([name, url]): [string, () => Promise<unknown>] => [name, () => kit.inject({ url, headers: { cookie } })]),
    ...Object.entries(baselines).map(([name, run]): [string, () => unknown] => [`baseline: ${name}`, run]),
  ];
  if (round % 2 === 1) steps.reverse();
  for (const [name, run] of steps) await time(run, slot(name).wall, slot(name).cpu);
}
const figures = Object.fromEntries(Object.entries(measured).map(([name, { wall, cpu }]) => [name, summary(wall, cpu)]));

report("console", {
  subscribers: COUNT,
  messages: COUNT,
  seedSeconds: Math.round(seedSeconds * 10) / 10,
  rounds: ROUNDS,
  loadAverage: { before: loadBefore.map((value) => Math.round(value * 100) / 100), after: loadavg().map((value) => Math.round(value * 100) / 100) },
  target: "every page under 300 ms",
  pages: figures,
});

db.close();
await kit.stop();
rmSync(directory, { recursive: true, force: true });
