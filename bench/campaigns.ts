// Campaigns at scale, on SQLite with the self-hosted server's plugins (jobs running, texts to a null provider):
// 1. `profiles` people (default 1,000,000) are seeded in bulk, straight into the profiles and subscriptions plugins'
//    collections (upsertMany, 10,000 rows a statement batch), not through the API: the bench measures the send, and
//    a million people posted one by one would take longer than everything else; a segment of about 30% of them by an
//    attribute rule and an event rule (tier gold and a "Visited" event within 30 days): its preview time;
// 2. a campaign to it sent now: the time until every message is in the outbox (the campaign "sent") and the send
//    process's CPU time over it (it also reads the audience, and the outbox delivers meanwhile), the outbox's
//    messages a second and CPU per message beside a bare better-sqlite3 loop inserting the same rows into the same
//    table (same indexes) in transactions of the same size, and peak RSS above the idle kit (a process of its own on
//    the seeded data directory, with the server's heap settings: npm start's young generation, startServer's heap
//    growth; sampled every 50 ms; peakAtSendSecond: when, negative in the preview), the event loop's longest delay
//    and p99 over the preview, the send and the outbox's delivery (a scan that never yields stalls every request) and
//    its longest turn in CPU (turnCpuMaxMs, turnCpuP99Ms: load stretches the delay, not the CPU; turnMainThreadCpu*: the
//    main thread's alone, without SQLite's and the GC's threads), the time to read the campaign's results and the
//    loop's longest delay meanwhile (resultsMs, resultsLoopDelayMaxMs), and the time and CPU until every text was
//    delivered (deliveredMs, deliveredCpuMs: the redirect part's server then starts with nothing left to send);
//    BENCH_SEND_FLAGS passes node flags to that process ("--cpu-prof --cpu-prof-dir=DIR" profiles the send),
//    BENCH_HEAP_PROFILE=allocated|promoted|held its heap (campaigns-heap.ts), BENCH_RSS_TIMELINE=FILE appends its
//    memory every 50 ms (above idle: RSS, heap, heap used) with the phases (preview, send, sending, sent) as JSON
//    lines; BENCH_SEED_TO=DIR copies the seeded database there and stops, for runs of the send part alone;
// 3. a short link's redirect (GET /l/<code>, 302) through the self-hosted server beside a bare node:http server
//    doing the same lookup on the same database, in alternated windows; medians and CPU per request.
// Quiet hours and the daily cap are off for the bench's company (its clock is the machine's). Load averages are
// printed with each part. Usage: npm run bench:campaigns [-- profiles [seconds]]; BENCH_ROUNDS (default 5).
import { spawn } from "node:child_process";
import { appendFileSync, copyFileSync, mkdirSync } from "node:fs";
import { loadavg } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { memoryUsage } from "node:process";
import { join } from "node:path";
import Database from "better-sqlite3";
import { memoryObjectStorage } from "../adapters/object-storage/memory/index.ts";
import { nodeScheduleScheduler } from "../adapters/scheduler/node-schedule/index.ts";
import { sqliteStorage } from "../adapters/storage/sqlite/index.ts";
import { DEFAULT_SEND_PAGE_SIZE } from "../plugins/campaigns/index.ts";
import { limitHeapGrowth } from "../server/heap-growth.ts";
import { serverPlugins } from "../server/server-kit.ts";
import { createReachkit, silentLogger, systemClock, type OutboxMessage, type Reachkit, type SmsSender, type Storage } from "../src/index.ts";
import { temporaryDirectory } from "../test/support/temp-dir.ts";
import { startHeapSampling, type HeapProfileMode } from "./campaigns-heap.ts";
import { seedSubscribers } from "./seed.ts";
import { rowInserter } from "./servers/baseline-sql.ts";
import { interleave, measureServer, report, startServerProcess, stopServerProcess } from "./support.ts";
import { mainThreadCpuMicros } from "./thread-cpu.ts";

const MB = 1024 * 1024;
const DAY = 86_400_000;
const secret = "bench-secret-bench-secret-bench-secret-0";
const mb = (bytes: number) => Math.round(bytes / MB);
const load = () => loadavg().map((value) => Math.round(value * 100) / 100);
const phoneOf = (i: number) => `+1555${String(i).padStart(7, "0")}`;
/**
 * As long as a stored profile's id (sortableId: 25 characters), in the same order as `i`. Not shorter: V8's
 * JSON.parse interns string values of up to 10 characters, in the old generation, so 9-character ids made
 * every profile read leave garbage there that a real database's ids do not.
 */
const profileOf = (i: number) => `p${String(i).padStart(24, "0")}`;
/** 40% gold, three in four of them visited within the month: 30% of everyone. */
const isGold = (i: number) => i % 10 < 4;
const visited = (i: number) => isGold(i) && i % 4 !== 0;
const SEGMENT = { name: "Gold visitors", rule: { and: [{ attribute: { name: "tier", op: "eq", value: "gold" } }, { event: { type: "Visited", within: "P30D" } }] } };

/** Takes every text and answers at once: the bench measures reachkit, not a provider. */
const nullSms: SmsSender = { name: "null", send: async () => ({ providerMessageId: "x" }) };

function kitOn(dataDir: string): Reachkit {
  return createReachkit({
    storage: sqliteStorage({ filename: join(dataDir, "reachkit.db"), cacheKiB: 4096 }),
    scheduler: nodeScheduleScheduler(),
    sms: nullSms,
    objectStorage: memoryObjectStorage({ clock: systemClock() }),
    logger: silentLogger(),
    hosts: "http://localhost",
    secret,
    plugins: serverPlugins(),
    config: { messaging: { ratePerSecond: Infinity }, rateLimits: { default: Infinity } },
  });
}

/** People straight into the profiles plugin's collections, 10,000 a batch: identifiers, the tier, the visits. */
async function seedProfiles(storage: Storage, companyId: string, count: number): Promise<void> {
  const now = Date.now();
  for (let start = 0; start < count; start += 10_000) {
    const end = Math.min(start + 10_000, count);
    const profiles = [];
    const identifiers = [];
    const attributes = [];
    const events = [];
    for (let i = start; i < end; i++) {
      const id = profileOf(i);
      profiles.push({ id, companyId, createdAt: now, updatedAt: now });
      identifiers.push({ id: `i${id}`, companyId, kind: "phone", value: phoneOf(i), key: `phone:${phoneOf(i)}`, profileId: id, linkedAt: now });
      attributes.push({ id: `${id}:tier`, companyId, profileId: id, name: "tier", value: isGold(i) ? "gold" : "silver", setAt: now });
      if (visited(i)) {
        const at = now - (i % 20) * DAY;
        events.push({ id: `e${id}`, companyId, profileId: id, seq: `${String(at).padStart(13, "0")}e${id}`, kind: "custom", type: "Visited", occurredAt: at, receivedAt: at });
      }
    }
    await storage.collection("profiles_profiles").upsertMany(profiles);
    await storage.collection("profiles_identifiers").upsertMany(identifiers);
    await storage.collection("profiles_attributes").upsertMany(attributes);
    await storage.collection("profiles_events").upsertMany(events);
  }
  await storage.collection<{ id: string; companyId: string; name: string; type: string; firstSetAt: number }>("profiles_attribute_types").upsert({ id: `${companyId}:tier`, companyId, name: "tier", type: "string", firstSetAt: now });
}

/** The send part, in a process of its own on the seeded directory: idle RSS, preview, the send, peak RSS. */
async function sendPart(dataDir: string, companyId: string, apiKey: string): Promise<void> {
  // Its heap as the server's (startServer does the same; runChild gives it npm start's young generation).
  limitHeapGrowth();
  const kit = kitOn(dataDir);
  await kit.start();
  const auth = { authorization: `Bearer ${apiKey}` };
  const request = async (method: string, url: string, body?: unknown) => JSON.parse((await kit.inject({ method, url, headers: auth, ...(body !== undefined ? { body } : {}) })).body || "{}");
  global.gc?.();
  await new Promise((resolve) => setTimeout(resolve, 500));
  const idle = memoryUsage();
  const idleRss = idle.rss;
  let peak = idle;
  let peakAtMs = performance.now();
  const heapMode = process.env.BENCH_HEAP_PROFILE as HeapProfileMode | undefined;
  const heap = heapMode ? await startHeapSampling(heapMode) : undefined;
  // What the peak is made of (the JS heap, or memory outside it: SQLite's, buffers'), for the note beside the figure.
  const timeline = process.env.BENCH_RSS_TIMELINE;
  const mark = (phase: string) => timeline && appendFileSync(timeline, `${JSON.stringify({ phase, ms: Math.round(performance.now()) })}\n`);
  const sampler = setInterval(() => {
    const now = memoryUsage();
    if (timeline) appendFileSync(timeline, `${JSON.stringify({ ms: Math.round(performance.now()), rssMB: mb(now.rss - idle.rss), heapMB: mb(now.heapTotal - idle.heapTotal), usedMB: mb(now.heapUsed - idle.heapUsed), externalMB: mb(now.external - idle.external) })}\n`);
    if (now.rss > peak.rss + MB) heap?.peaked();
    if (now.rss > peak.rss) {
      peak = now;
      peakAtMs = performance.now();
    }
  }, 50);
  // How long the process held its event loop at most: a scan that never yields stalls every request meanwhile.
  const loopDelay = monitorEventLoopDelay({ resolution: 20 });
  loopDelay.enable();
  const turns = turnCpuSampler();
  const segment = await request("POST", "/v1/segments", SEGMENT);
  let started = performance.now();
  mark("preview");
  const preview = await request("GET", `/v1/segments/${segment.id}/preview`);
  const previewMs = performance.now() - started;
  const campaign = await request("POST", "/v1/campaigns", { name: "Spring", segmentId: segment.id, channel: "sms", text: "Spring sale: {link}", link: "https://shop.example.com/sale" });
  started = performance.now();
  mark("send");
  const cpuBefore = process.cpuUsage();
  await request("POST", `/v1/campaigns/${campaign.id}/send`, {});
  for (let last = "scheduled"; ; ) {
    const status = (await kit.plugin("campaigns").get(companyId, campaign.id))?.status ?? "deleted";
    if (status !== last) mark((last = status));
    if (status === "sent") break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const enqueueMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  clearInterval(sampler);
  if (heap) console.error(`heap sites (${heapMode}, MB): ${JSON.stringify(await heap.stop(join(import.meta.dirname, "results")), null, 1)}`);
  // The texts still queued are delivered before the process stops, so that the redirect part's server starts on a
  // database with nothing left to send (its job runner would deliver them while the redirect is measured). The
  // turns and the loop's delay are measured until then: the outbox may deliver the last texts after the campaign is sent.
  for (;;) {
    const { queued, running } = await kit.jobs.queueStats();
    if (queued === 0 && running === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const deliveredMs = performance.now() - started;
  const deliveredCpu = process.cpuUsage(cpuBefore);
  loopDelay.disable();
  const turnCpu = turns.stop();
  // Reading the results: its time, and the process's longest turn meanwhile (a count that scans every recipient holds it).
  const resultsDelay = monitorEventLoopDelay({ resolution: 10 });
  resultsDelay.enable();
  // The histogram's first sample only sets its reference: a block before it would go unrecorded.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const resultsStarted = performance.now();
  const results = await kit.plugin("campaigns").campaignResults(companyId, campaign.id);
  const resultsMs = performance.now() - resultsStarted;
  await new Promise((resolve) => setTimeout(resolve, 20));
  resultsDelay.disable();
  // What the send left behind once garbage is collected: held memory, where the peak above may be garbage.
  global.gc?.();
  const afterGc = memoryUsage();
  await kit.stop();
  console.log(`RESULT ${JSON.stringify({ audience: preview.size, scanned: preview.scanned, previewMs: Math.round(previewMs), sent: results!.sent, enqueueMs: Math.round(enqueueMs), enqueueCpuMs: Math.round((cpu.user + cpu.system) / 1000), deliveredMs: Math.round(deliveredMs), deliveredCpuMs: Math.round((deliveredCpu.user + deliveredCpu.system) / 1000), idleRssMB: Math.round(idleRss / MB), peakAboveIdleMB: Math.round((peak.rss - idleRss) / MB), peakHeapAboveIdleMB: Math.round((peak.heapTotal - idle.heapTotal) / MB), peakOutsideHeapAboveIdleMB: Math.round((peak.rss - peak.heapTotal - (idle.rss - idle.heapTotal)) / MB), heapUsedAfterGcAboveIdleMB: Math.round((afterGc.heapUsed - idle.heapUsed) / MB), peakAtSendSecond: Math.round((peakAtMs - started) / 1000), eventLoopDelayMaxMs: Math.round(loopDelay.max / 1e6), eventLoopDelayP99Ms: Math.round(loopDelay.percentile(99) / 1e6), turnCpuMaxMs: turnCpu.maxMs, turnCpuP99Ms: turnCpu.p99Ms, turnMainThreadCpuMaxMs: turnCpu.mainThreadMaxMs, turnMainThreadCpuP99Ms: turnCpu.mainThreadP99Ms, resultsMs: Math.round(resultsMs), resultsLoopDelayMaxMs: Math.round(resultsDelay.max / 1e6) })}`);
}

/**
 * The process's CPU between two ticks of a 10 ms timer: at most one tick a turn of the event loop, so a turn that
 * holds the loop shows as its CPU (10 ms at least, the timer's own period; the SQLite checkpoint and GC threads
 * count too). The event loop's delay is the same turn in wall time, which a loaded machine stretches; CPU is the
 * turn's own work. On Linux also the main thread's own CPU (bench/thread-cpu.ts), without the other threads': the
 * turn's work alone.
 */
function turnCpuSampler(): { stop(): { maxMs: number; p99Ms: number; mainThreadMaxMs?: number; mainThreadP99Ms?: number } } {
  const samples: number[] = [];
  const mainThreadSamples: number[] = [];
  let last = process.cpuUsage();
  let lastMainThread = mainThreadCpuMicros();
  const timer = setInterval(() => {
    const now = process.cpuUsage();
    samples.push((now.user - last.user + now.system - last.system) / 1000);
    last = now;
    const mainThread = mainThreadCpuMicros();
    if (mainThread !== undefined && lastMainThread !== undefined) mainThreadSamples.push((mainThread - lastMainThread) / 1000);
    lastMainThread = mainThread;
  }, 10);
  return {
    stop() {
      clearInterval(timer);
      if (mainThreadSamples.length === 0) return maxAndP99(samples);
      const mainThread = maxAndP99(mainThreadSamples);
      return { ...maxAndP99(samples), mainThreadMaxMs: mainThread.maxMs, mainThreadP99Ms: mainThread.p99Ms };
    },
  };
}

/** The largest of `samples` and their 99th percentile, rounded (sorts them). */
function maxAndP99(samples: number[]): { maxMs: number; p99Ms: number } {
  samples.sort((a, b) => a - b);
  return { maxMs: Math.round(samples.at(-1) ?? 0), p99Ms: Math.round(samples[Math.floor(samples.length * 0.99)] ?? 0) };
}

/** The baseline of the outbox: the same number of message rows inserted into the same table by a bare loop, in transactions of the send's page size; its wall and CPU milliseconds. */
function bareOutboxInserts(dataDir: string, companyId: string, count: number): { ms: number; cpuMs: number } {
  const db = new Database(join(dataDir, "reachkit.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  const insert = rowInserter<OutboxMessage>(db, "reachkit_outbox");
  const now = Date.now();
  const page = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      insert({ id: `bare${String(i).padStart(8, "0")}`, companyId, to: phoneOf(i), from: "+15550000000", body: `Spring sale: http://localhost/l/bare${i}`, kind: "bare", status: "queued", idempotencyKey: `bare:${i}`, attempts: 0, createdAt: now, updatedAt: now });
    }
  });
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  for (let from = 0; from < count; from += DEFAULT_SEND_PAGE_SIZE) page(from, Math.min(from + DEFAULT_SEND_PAGE_SIZE, count));
  const cpu = process.cpuUsage(cpuBefore);
  const ms = performance.now() - started;
  db.close();
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000 };
}

async function runChild(args: string[]): Promise<Record<string, number>> {
  const child = spawn(process.execPath, ["--expose-gc", "--max-semi-space-size=8", ...(process.env.BENCH_SEND_FLAGS ?? "").split(" ").filter(Boolean), "--import", "tsx", import.meta.filename, ...args], { stdio: ["ignore", "pipe", "inherit"] });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  const code = await new Promise((resolve) => child.once("exit", resolve));
  const line = output.split("\n").find((text) => text.startsWith("RESULT "));
  if (code !== 0 || !line) throw new Error(`the send part exited with ${code}: ${output}`);
  return JSON.parse(line.slice("RESULT ".length));
}

if (process.argv[2] === "--send") {
  await sendPart(process.argv[3]!, process.argv[4]!, process.argv[5]!);
} else {
  const profiles = Number(process.argv[2] ?? 1_000_000);
  const seconds = Number(process.argv[3] ?? 5);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
  const dataDir = temporaryDirectory("bench-campaigns");
  const seeding = kitOn(dataDir);
  await seeding.start({ runJobs: false });
  const { company, output } = await seeding.provisionCompany({ name: "Bench Co" });
  const apiKey = output.apiKey as string;
  await seeding.plugin("sendRules").policies.set(company.id, { quietHours: null, dailyCap: null });
  const started = performance.now();
  const seedCpu = process.cpuUsage();
  await seedProfiles(seeding.storage, company.id, profiles);
  const gold = Array.from({ length: profiles }, (_, i) => i).filter(isGold);
  await seedSubscribers(seeding.storage, company.id, gold.length, (n) => phoneOf(gold[n]!));
  const seedMs = performance.now() - started;
  const { user, system } = process.cpuUsage(seedCpu);
  const code = JSON.parse((await seeding.inject({ method: "POST", url: "/v1/short-links", headers: { authorization: `Bearer ${apiKey}` }, body: { url: "https://shop.example.com/sale" } })).body).code as string;
  await seeding.stop();
  console.log(`seeded ${profiles} profiles in ${Math.round(seedMs / 1000)} s (CPU ${Math.round((user + system) / 1e6)} s); load ${load()}`);
  const seedTo = process.env.BENCH_SEED_TO;
  if (seedTo) {
    // Seeded once, the send part run many times on copies: `tsx bench/campaigns.ts --send <copy> <company> <key>`.
    mkdirSync(seedTo, { recursive: true });
    copyFileSync(join(dataDir, "reachkit.db"), join(seedTo, "reachkit.db"));
    console.log(`copied to ${seedTo}: --send <copy of it> ${company.id} ${apiKey}`);
    process.exit(0);
  }

  const loadBeforeSend = load();
  const send = await runChild(["--send", dataDir, company.id, apiKey]);
  const loadAfterSend = load();
  const bare = bareOutboxInserts(dataDir, company.id, send.sent!);
  const outbox = {
    messages: send.sent,
    reachkitMessagesPerSecond: Math.round((send.sent! / send.enqueueMs!) * 1000),
    bareInsertsPerSecond: Math.round((send.sent! / bare.ms) * 1000),
    ratio: Math.round((bare.ms / send.enqueueMs!) * 1000) / 1000,
    reachkitCpuMicrosPerMessage: Math.round((send.enqueueCpuMs! * 1000) / send.sent!),
    reachkitCpuMicrosPerDeliveredMessage: Math.round((send.deliveredCpuMs! * 1000) / send.sent!),
    bareCpuMicrosPerRow: Math.round((bare.cpuMs * 1000) / send.sent!),
  };
  console.log(JSON.stringify({ send, outbox, loadBeforeSend, loadAfterSend }));

  const env = { BENCH_DATA_DIR: dataDir, BENCH_SECRET: secret };
  const servers = {
    bare: await startServerProcess(join(import.meta.dirname, "servers/bare-short-links.ts"), env),
    reachkit: await startServerProcess(join(import.meta.dirname, "servers/reachkit-server.ts"), env),
  };
  const loadBeforeRedirect = load();
  const path = `/l/${code}`;
  for (const server of Object.values(servers)) await measureServer(server, { path, seconds: 3, connections: 32, warmUpSeconds: 0 });
  const redirect = await interleave(servers, (server) => measureServer(server, { path, seconds, connections: 32, warmUpSeconds: 0 }), rounds);
  for (const server of Object.values(servers)) await stopServerProcess(server.child);
  report("campaigns", {
    profiles,
    seeding: { ms: Math.round(seedMs), cpuMs: Math.round((user + system) / 1000) },
    segment: SEGMENT,
    preview: { audience: send.audience, scanned: send.scanned, ms: send.previewMs },
    send: { messages: send.sent, enqueueMs: send.enqueueMs, enqueueCpuMs: send.enqueueCpuMs, deliveredMs: send.deliveredMs, deliveredCpuMs: send.deliveredCpuMs, idleRssMB: send.idleRssMB, peakAboveIdleMB: send.peakAboveIdleMB, peakHeapAboveIdleMB: send.peakHeapAboveIdleMB, peakOutsideHeapAboveIdleMB: send.peakOutsideHeapAboveIdleMB, heapUsedAfterGcAboveIdleMB: send.heapUsedAfterGcAboveIdleMB, peakAtSendSecond: send.peakAtSendSecond, eventLoopDelayMaxMs: send.eventLoopDelayMaxMs, eventLoopDelayP99Ms: send.eventLoopDelayP99Ms, turnCpuMaxMs: send.turnCpuMaxMs, turnCpuP99Ms: send.turnCpuP99Ms, turnMainThreadCpuMaxMs: send.turnMainThreadCpuMaxMs, turnMainThreadCpuP99Ms: send.turnMainThreadCpuP99Ms, resultsMs: send.resultsMs, resultsLoopDelayMaxMs: send.resultsLoopDelayMaxMs, loadBeforeSend, loadAfterSend },
    outbox,
    redirect: { request: "GET /l/<code> (302)", seconds, connections: 32, ...redirect, target: 0.9, loadBeforeRedirect },
  });
}
