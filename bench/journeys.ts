// Journeys at scale, in one process on SQLite (the self-hosted server's storage and plugins, jobs running):
// 1. a variant with `requests` back-in-stock requests (default 100,000) comes back in stock: the time until every
//    allowed message is in the outbox, and peak RSS above the idle kit (a process of its own on the seeded data
//    directory, sampled every 50 ms), beside a baseline that does the same reads and writes by plain better-sqlite3
//    (bareBackInStock);
// 2. product-view ingestion (kit.inject, 10,000 known people in turn, 500 products) with the six journeys active
//    beside the same ingestion with them paused, in alternated windows of `seconds`, after a pass in which each
//    person's first view enters them in browse abandonment (its CPU per event reported apart); medians, CPU per event.
// Quiet hours and the daily cap are off for the bench's company (its clock is the machine's). Load averages are
// printed before and after each part. Usage: npm run bench:journeys [-- requests [seconds]]; BENCH_ROUNDS (default 7).
import { spawn } from "node:child_process";
import { cpuUsage, memoryUsage } from "node:process";
import { loadavg } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { memoryObjectStorage } from "../adapters/object-storage/memory/index.ts";
import { nodeScheduleScheduler } from "../adapters/scheduler/node-schedule/index.ts";
import { sqliteStorage } from "../adapters/storage/sqlite/index.ts";
import { serverPlugins } from "../server/server-kit.ts";
import { createReachkit, OUTBOX_DRAIN_JOB, silentLogger, systemClock, type OutboxMessage, type Reachkit, type SmsSender } from "../src/index.ts";
import { OUTBOX_COLLECTION } from "../src/messaging/outbox-record.ts";
import { temporaryDirectory } from "../test/support/temp-dir.ts";
import { indexedStatement } from "./servers/baseline-sql.ts";
import { report } from "./support.ts";

const requests = Number(process.argv[2] ?? 100_000);
const seconds = Number(process.argv[3] ?? 3);
const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
const PEOPLE = 10_000;
const MB = 1024 * 1024;
const secret = "bench-secret-bench-secret-bench-secret-0";
const load = () => loadavg().map((value) => Math.round(value * 100) / 100);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const phoneOf = (i: number) => `+1555${String(i).padStart(7, "0")}`;

/** Takes every text and answers at once: the bench measures reachkit, not a provider. */
const nullSms: SmsSender = { name: "null", send: async () => ({ providerMessageId: "x" }) };

function kitOn(dataDir: string, objects = memoryObjectStorage({ clock: systemClock() })): Reachkit {
  return createReachkit({
    storage: sqliteStorage({ filename: join(dataDir, "reachkit.db"), cacheKiB: 4096 }),
    scheduler: nodeScheduleScheduler(),
    sms: nullSms,
    objectStorage: objects,
    logger: silentLogger(),
    secret,
    plugins: serverPlugins(),
    config: { messaging: { ratePerSecond: Infinity }, rateLimits: Object.fromEntries(["default", "catalog-upload", "identity", "events"].map((name) => [name, Infinity])) },
  });
}

async function uploadCatalog(kit: Reachkit, apiKey: string, available: boolean, inventory: number): Promise<void> {
  const auth = { authorization: `Bearer ${apiKey}` };
  const upload = JSON.parse((await kit.inject({ method: "POST", url: "/v1/product-catalog/uploads", body: {}, headers: auth })).body);
  const variant = { id: "mug-blue", name: "Blue", link: "https://acme.example/mug", prices: [{ currencyCode: "USD", amount: "20.00" }], availableForPurchase: available, inventoryQuantity: inventory, lastUpdated: "2026-02-01T10:00:00Z" };
  const product = { id: "mug", name: "Blue Mug", link: "https://acme.example/mug", lastUpdated: "2026-02-01T10:00:00Z", variants: [variant] };
  const url = new URL(upload.uploadUrl);
  await kit.inject({ method: "PUT", url: `${url.pathname}${url.search}`, body: `${JSON.stringify(product)}\n` });
  for (;;) {
    const status = JSON.parse((await kit.inject({ url: `/v1/product-catalog/uploads/${upload.uploadId}`, headers: auth })).body).status;
    if (status === "completed") return;
    if (status === "failed") throw new Error("the catalog upload failed");
    await sleep(50);
  }
}

/** The data directory of the back-in-stock part: a company, its journey, the variant sold out, `requests` people asking for it. */
async function seedBackInStock(): Promise<{ dataDir: string; apiKey: string; companyId: string; journeyId: string; seedSeconds: number }> {
  const dataDir = temporaryDirectory("bench-journeys");
  const objects = memoryObjectStorage({ clock: systemClock() });
  const kit = kitOn(dataDir, objects);
  await kit.start();
  const { output, company } = await kit.provisionCompany({ name: "Bench Co" });
  const apiKey = output.apiKey as string;
  await kit.plugin("sendRules").policies.set(company.id, { quietHours: null, dailyCap: null });
  const journey = await kit.plugin("journeys").create(company.id, { template: "back_in_stock", pacing: { messagesPerUnit: 1, interval: "PT1H" } });
  await uploadCatalog(kit, apiKey, false, 0);
  const seedStarted = Date.now();
  for (let i = 0; i < requests; i++) {
    await kit.plugin("subscriptions").optInNow(company.id, { user: { phone: phoneOf(i) }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING", singleOptIn: true });
    await kit.plugin("profiles").recordCustomEvent(company.id, { type: "back_in_stock_request", properties: { productVariantId: "mug-blue" }, user: { phone: phoneOf(i) } });
  }
  // The seed's welcome texts are not what is measured: their sender's drain goes, and they are due no more.
  await kit.jobs.deleteWhere({ type: OUTBOX_DRAIN_JOB });
  await kit.storage.collection<OutboxMessage>(OUTBOX_COLLECTION).updateWhere({ dueAt: { exists: true } }, { dueAt: undefined });
  const seedSeconds = (Date.now() - seedStarted) / 1000;
  await kit.stop();
  return { dataDir, apiKey, companyId: company.id, journeyId: journey.id, seedSeconds };
}

/**
 * In a process of its own on the seeded data directory (its RSS is the idle server's, not the seed's): the second
 * upload makes the variant available, and the time runs until the journey has sent every text.
 */
async function wave(): Promise<void> {
  const { BENCH_WAVE_DIR: dataDir, BENCH_API_KEY: apiKey, BENCH_COMPANY: companyId, BENCH_JOURNEY: journeyId } = process.env as Record<string, string>;
  const kit = kitOn(dataDir);
  await kit.start();
  await sleep(2000);
  global.gc?.();
  const idleRss = memoryUsage().rss;
  let peakRss = idleRss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, memoryUsage().rss)), 50);
  const started = Date.now();
  await uploadCatalog(kit, apiKey, true, requests);
  const journeys = kit.plugin("journeys");
  while (((await journeys.stats(companyId, journeyId))?.sent ?? 0) < requests) await sleep(250);
  const seconds = (Date.now() - started) / 1000;
  clearInterval(sampler);
  await kit.stop();
  process.stdout.write(`${JSON.stringify({ seconds, idleRssMB: Math.round(idleRss / MB), peakRssAboveIdleMB: Math.round((peakRss - idleRss) / MB) })}\n`);
}

async function backInStock(): Promise<Record<string, unknown>> {
  const seeded = await seedBackInStock();
  const loadBefore = load();
  const child = spawn(process.execPath, ["--import", "tsx", "--expose-gc", import.meta.filename, String(requests)], {
    env: { ...process.env, BENCH_CHILD: "wave", BENCH_WAVE_DIR: seeded.dataDir, BENCH_API_KEY: seeded.apiKey, BENCH_COMPANY: seeded.companyId, BENCH_JOURNEY: seeded.journeyId },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let printed = "";
  child.stdout.on("data", (chunk: Buffer) => (printed += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  if (code !== 0) throw new Error(`the wave process ended with ${code}: ${printed}`);
  const measured = JSON.parse(printed.trim().split("\n").at(-1)!) as { seconds: number; idleRssMB: number; peakRssAboveIdleMB: number };
  const loadAfter = load();
  const baselineSeconds = bareBackInStock(requests);
  return {
    requests,
    seedSeconds: seeded.seedSeconds,
    reachkitSeconds: measured.seconds,
    baselineSeconds,
    ratio: Math.round((baselineSeconds / measured.seconds) * 1000) / 1000,
    idleRssMB: measured.idleRssMB,
    peakRssAboveIdleMB: measured.peakRssAboveIdleMB,
    loadBefore,
    loadAfter,
  };
}

/**
 * The same work by plain better-sqlite3, 250 people per transaction: read a page of waiting requests in order; per
 * person read the subscription, the person's phone and attributes, and today's count of their texts; mark the
 * request answered; write the enrollment, its two log rows, the counted send and the outbox row, due now
 * (its sender's drain, queued once, sends it: no job row per text).
 */
function bareBackInStock(people: number): number {
  const db = new Database(join(temporaryDirectory("bench-journeys-bare"), "bare.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec(`
    CREATE TABLE requests (id TEXT PRIMARY KEY, variant TEXT, state TEXT, seq TEXT, profile TEXT);
    CREATE INDEX requests_waiting ON requests (variant, state, seq);
    CREATE TABLE subs (id TEXT PRIMARY KEY, doc TEXT);
    CREATE TABLE identifiers (id TEXT PRIMARY KEY, profile TEXT, value TEXT);
    CREATE INDEX identifiers_profile ON identifiers (profile);
    CREATE TABLE attributes (id TEXT PRIMARY KEY, profile TEXT, doc TEXT);
    CREATE INDEX attributes_profile ON attributes (profile);
    CREATE TABLE enrollments (id TEXT PRIMARY KEY, profile TEXT, journey TEXT, state TEXT, doc TEXT);
    CREATE INDEX enrollments_profile ON enrollments (profile);
    CREATE INDEX enrollments_journey ON enrollments (journey, state);
    CREATE TABLE log (id TEXT PRIMARY KEY, journey TEXT, kind TEXT, profile TEXT);
    CREATE INDEX log_kind ON log (journey, kind);
    CREATE TABLE sends (id TEXT PRIMARY KEY, "to" TEXT, at INTEGER);
    CREATE INDEX sends_to ON sends ("to", at);
    CREATE TABLE outbox (id TEXT PRIMARY KEY, "to" TEXT, key TEXT UNIQUE, sender TEXT, due_at INTEGER, doc TEXT);
    CREATE INDEX outbox_due ON outbox (sender, due_at);
  `);
  const seed = {
    request: db.prepare("INSERT INTO requests VALUES (?, 'v', 'waiting', ?, ?)"),
    sub: db.prepare("INSERT INTO subs VALUES (?, ?)"),
    identifier: db.prepare("INSERT INTO identifiers VALUES (?, ?, ?)"),
  };
  db.transaction(() => {
    for (let i = 0; i < people; i++) {
      seed.request.run(`r${i}`, String(i).padStart(13, "0"), `p${i}`);
      seed.sub.run(`TEXT:${phoneOf(i)}:MARKETING`, JSON.stringify({ state: "active" }));
      seed.identifier.run(`phone:${phoneOf(i)}`, `p${i}`, phoneOf(i));
    }
  })();
  const page = indexedStatement(db, "SELECT id, profile FROM requests WHERE variant = 'v' AND state = 'waiting' ORDER BY seq LIMIT 250");
  const answer = indexedStatement(db, "UPDATE requests SET state = 'answered' WHERE id = ? AND state = 'waiting'");
  const phone = indexedStatement(db, "SELECT value FROM identifiers WHERE profile = ?");
  const attributes = indexedStatement(db, "SELECT doc FROM attributes WHERE profile = ?");
  const sub = indexedStatement(db, "SELECT doc FROM subs WHERE id = ?");
  const today = indexedStatement(db, 'SELECT count(*) AS n FROM sends WHERE "to" = ? AND at >= ?');
  const enrollment = db.prepare("INSERT INTO enrollments VALUES (?, ?, 'j', 'completed', ?)");
  const log = db.prepare("INSERT INTO log VALUES (?, 'j', ?, ?)");
  const send = db.prepare("INSERT INTO sends VALUES (?, ?, ?)");
  const outbox = db.prepare("INSERT INTO outbox VALUES (?, ?, ?, '+15550000000', ?, ?)");
  const body = "Blue Mug is back in stock at Bench Co! Get yours before it sells out again: https://acme.example/mug";
  const started = process.hrtime.bigint();
  for (;;) {
    const told = db.transaction(() => {
      const rows = page.all() as Array<{ id: string; profile: string }>;
      for (const row of rows) {
        answer.run(row.id);
        const to = (phone.all(row.profile) as Array<{ value: string }>).at(-1)!.value;
        attributes.all(row.profile);
        if (JSON.parse((sub.get(`TEXT:${to}:MARKETING`) as { doc: string }).doc).state !== "active") continue;
        today.get(to, 0);
        enrollment.run(`e${row.id}`, row.profile, JSON.stringify({ step: 1, enteredAt: Date.now() }));
        log.run(`l${row.id}e`, "entered", row.profile);
        send.run(`s${row.id}`, to, Date.now());
        outbox.run(`m${row.id}`, to, `k${row.id}`, Date.now(), JSON.stringify({ to, body, status: "queued" }));
        log.run(`l${row.id}s`, "sent", row.profile);
      }
      return rows.length;
    })();
    if (told === 0) break;
  }
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  db.close();
  return elapsed;
}

async function ingestion(): Promise<Record<string, unknown>> {
  const dataDir = temporaryDirectory("bench-journeys-ingest");
  const kit = kitOn(dataDir);
  await kit.start();
  const { output, company } = await kit.provisionCompany({ name: "Bench Co" });
  const headers = { authorization: `Bearer ${output.apiKey as string}` };
  for (let i = 0; i < PEOPLE; i++) await kit.plugin("profiles").identify(company.id, { phone: phoneOf(i) });
  const journeys = kit.plugin("journeys");
  const installed: Array<{ id: string }> = [];
  for (const template of ["back_in_stock", "price_drop", "low_inventory", "cart_abandonment", "browse_abandonment", "welcome"] as const) installed.push(await journeys.create(company.id, { template }));
  let next = 0;
  const body = () => {
    const i = next++;
    return { items: [{ productId: `p-${i % 500}`, productVariantId: `p-${i % 500}-blue`, name: "Mug", productUrl: "https://acme.example/p", price: [{ value: 12.5 }] }], user: { phone: phoneOf(i % PEOPLE) } };
  };
  const window = async (): Promise<{ perSecond: number; cpuMicros: number }> => {
    const until = Date.now() + seconds * 1000;
    const cpu = cpuUsage();
    let done = 0;
    const started = Date.now();
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (Date.now() < until) {
          const response = await kit.inject({ method: "POST", url: "/v1/events/ecommerce/product-view", body: body(), headers });
          if (response.status !== 200) throw new Error(`product view answered ${response.status}: ${response.body}`);
          done++;
        }
      }),
    );
    const used = cpuUsage(cpu);
    return { perSecond: done / ((Date.now() - started) / 1000), cpuMicros: (used.user + used.system) / done };
  };
  const setAll = async (status: "active" | "paused") => {
    for (const journey of installed) await (status === "active" ? journeys.resume(company.id, journey.id) : journeys.pause(company.id, journey.id));
  };
  const loadBefore = load();
  // Warm-up, journeys active: every person's first view enters them in browse abandonment (the costly first entry,
  // measured here); the windows then see people who browse on, as a storefront's visitors do.
  const firstCpu = cpuUsage();
  for (let i = 0; i < PEOPLE; i += 16) {
    await Promise.all(Array.from({ length: 16 }, () => kit.inject({ method: "POST", url: "/v1/events/ecommerce/product-view", body: body(), headers })));
  }
  const firstUsed = cpuUsage(firstCpu);
  const firstViewCpuMicros = Math.round((firstUsed.user + firstUsed.system) / PEOPLE);
  await setAll("paused");
  await window();
  const active: Array<{ perSecond: number; cpuMicros: number }> = [];
  const none: Array<{ perSecond: number; cpuMicros: number }> = [];
  for (let round = 0; round < rounds; round++) {
    await setAll("paused");
    none.push(await window());
    await setAll("active");
    active.push(await window());
  }
  const loadAfter = load();
  await kit.stop();
  const activeRate = median(active.map((w) => w.perSecond));
  const noneRate = median(none.map((w) => w.perSecond));
  return {
    eventsPerSecondSixActive: Math.round(activeRate),
    eventsPerSecondNone: Math.round(noneRate),
    ratio: Math.round((activeRate / noneRate) * 100) / 100,
    cpuMicrosPerEventSixActive: Math.round(median(active.map((w) => w.cpuMicros))),
    cpuMicrosPerEventNone: Math.round(median(none.map((w) => w.cpuMicros))),
    firstViewCpuMicrosSixActive: firstViewCpuMicros,
    rounds,
    windowSeconds: seconds,
    // Each window's events per second and CPU per event: a window with less CPU per second than its neighbours was
    // either given less of the machine or waited.
    windows: {
      sixActive: active.map((w) => ({ perSecond: Math.round(w.perSecond), cpuMicros: Math.round(w.cpuMicros) })),
      none: none.map((w) => ({ perSecond: Math.round(w.perSecond), cpuMicros: Math.round(w.cpuMicros) })),
    },
    loadBefore,
    loadAfter,
  };
}

if (process.env.BENCH_CHILD === "wave") {
  await wave();
} else {
  const parts = (process.env.BENCH_PARTS ?? "back-in-stock,ingestion").split(",");
  const figures: Record<string, unknown> = { date: new Date().toISOString(), node: process.version };
  if (parts.includes("ingestion")) figures.ingestion = await ingestion();
  if (parts.includes("back-in-stock")) figures.backInStock = await backInStock();
  report("journeys", figures);
}
process.exit(0);
