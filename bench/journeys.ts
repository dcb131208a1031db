// Journeys at scale, in one process on SQLite (the self-hosted server's storage and plugins, jobs running):
// 1. a variant with `requests` back-in-stock requests (default 100,000) comes back in stock: the time until every
//    allowed message is in the outbox, and peak RSS above the idle kit (sampled every 50 ms), beside a baseline that
//    does the same writes by plain better-sqlite3 (per person: read the subscription, insert the outbox row and its
//    job; 250 people per transaction);
// 2. product-view ingestion (kit.inject, 10,000 known people in turn, 500 products) with the six journeys active
//    beside the same ingestion with them paused, in alternated windows of `seconds`, after a pass in which each
//    person's first view enters them in browse abandonment (its CPU per event reported apart); medians, CPU per event.
// Quiet hours and the daily cap are off for the bench's company (its clock is the machine's). Load averages are
// printed before and after each part. Usage: npm run bench:journeys [-- requests [seconds]]; BENCH_ROUNDS (default 7).
import { cpuUsage, memoryUsage } from "node:process";
import { loadavg } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { memoryObjectStorage } from "../adapters/object-storage/memory/index.ts";
import { nodeScheduleScheduler } from "../adapters/scheduler/node-schedule/index.ts";
import { sqliteStorage } from "../adapters/storage/sqlite/index.ts";
import { serverPlugins } from "../server/server-kit.ts";
import { createReachkit, OUTBOX_SEND_JOB, silentLogger, systemClock, type Reachkit, type SmsSender } from "../src/index.ts";
import { temporaryDirectory } from "../test/support/temp-dir.ts";
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

async function backInStock(): Promise<Record<string, unknown>> {
  const dataDir = temporaryDirectory("bench-journeys");
  const objects = memoryObjectStorage({ clock: systemClock() });
  let kit = kitOn(dataDir, objects);
  await kit.start({ runJobs: false });
  const { output, company } = await kit.provisionCompany({ name: "Bench Co" });
  const apiKey = output.apiKey as string;
  await kit.plugin("sendRules").policies.set(company.id, { quietHours: null, dailyCap: null });
  const journey = await kit.plugin("journeys").create(company.id, { template: "back_in_stock", pacing: { messagesPerUnit: 1, interval: "PT1H" } });
  await kit.stop();
  kit = kitOn(dataDir, objects);
  await kit.start();
  await uploadCatalog(kit, apiKey, false, 0);
  const seedStarted = Date.now();
  for (let i = 0; i < requests; i++) {
    await kit.plugin("subscriptions").optInNow(company.id, { user: { phone: phoneOf(i) }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING", singleOptIn: true });
    await kit.plugin("profiles").recordCustomEvent(company.id, { type: "back_in_stock_request", properties: { productVariantId: "mug-blue" }, user: { phone: phoneOf(i) } });
  }
  // The seed's welcome texts are not what is measured.
  await kit.jobs.deleteWhere({ type: OUTBOX_SEND_JOB });
  const seedSeconds = (Date.now() - seedStarted) / 1000;
  global.gc?.();
  await sleep(1000);
  const idleRss = memoryUsage().rss;
  let peakRss = idleRss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, memoryUsage().rss)), 50);
  const loadBefore = load();
  const started = Date.now();
  await uploadCatalog(kit, apiKey, true, requests);
  const journeys = kit.plugin("journeys");
  while (((await journeys.stats(company.id, journey.id))?.sent ?? 0) < requests) await sleep(250);
  const reachkitSeconds = (Date.now() - started) / 1000;
  clearInterval(sampler);
  const loadAfter = load();
  await kit.stop();
  const baselineSeconds = bareBackInStock(requests);
  return {
    requests,
    seedSeconds,
    reachkitSeconds,
    baselineSeconds,
    ratio: Math.round((baselineSeconds / reachkitSeconds) * 100) / 100,
    idleRssMB: Math.round(idleRss / MB),
    peakRssAboveIdleMB: Math.round((peakRss - idleRss) / MB),
    loadBefore,
    loadAfter,
  };
}

/** The same rows by plain better-sqlite3: per person a subscription read, an outbox row and its job, 250 per transaction. */
function bareBackInStock(people: number): number {
  const db = new Database(join(temporaryDirectory("bench-journeys-bare"), "bare.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec("CREATE TABLE subs (id TEXT PRIMARY KEY, doc TEXT); CREATE TABLE outbox (id TEXT PRIMARY KEY, doc TEXT); CREATE TABLE jobs (id TEXT PRIMARY KEY, doc TEXT)");
  const addSub = db.prepare("INSERT INTO subs VALUES (?, ?)");
  db.transaction(() => {
    for (let i = 0; i < people; i++) addSub.run(`c:TEXT:${phoneOf(i)}:MARKETING`, JSON.stringify({ state: "active" }));
  })();
  const readSub = db.prepare("SELECT doc FROM subs WHERE id = ?");
  const addOutbox = db.prepare("INSERT INTO outbox VALUES (?, ?)");
  const addJob = db.prepare("INSERT INTO jobs VALUES (?, ?)");
  const started = process.hrtime.bigint();
  for (let from = 0; from < people; from += 250) {
    db.transaction(() => {
      for (let i = from; i < Math.min(people, from + 250); i++) {
        const sub = JSON.parse((readSub.get(`c:TEXT:${phoneOf(i)}:MARKETING`) as { doc: string }).doc);
        if (sub.state !== "active") continue;
        addOutbox.run(`m${i}`, JSON.stringify({ to: phoneOf(i), body: "Blue Mug is back in stock at Bench Co! Get yours before it sells out again: https://acme.example/mug" }));
        addJob.run(`j${i}`, JSON.stringify({ type: "reachkit.outbox.send", payload: { messageId: `m${i}` } }));
      }
    })();
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
    loadBefore,
    loadAfter,
  };
}

const parts = (process.env.BENCH_PARTS ?? "back-in-stock,ingestion").split(",");
const figures: Record<string, unknown> = { date: new Date().toISOString(), node: process.version };
if (parts.includes("ingestion")) figures.ingestion = await ingestion();
if (parts.includes("back-in-stock")) figures.backInStock = await backInStock();
report("journeys", figures);
process.exit(0);
