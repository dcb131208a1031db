// Event ingestion, the highest-volume write: POST /v1/events/ecommerce/product-view accepted per second by the
// self-hosted server, beside bench/servers/bare-events.ts (node:http + better-sqlite3: token lookup, JSON.parse,
// the same JSON inserted as one row), both running, measured in alternated windows after a warm-up (support.ts
// `interleave`), 10,000 known people in turn. Then memory and reads: one server takes events until
// `stored` are stored (RSS after 10,000 and after all of them), and the newest 50 events of 1,000 people are
// read through the profiles service (p50, p99; on PostgreSQL again after ANALYZE). Both on SQLite, then on PostgreSQL
// (a throw-away cluster of Debian's packages, test/support/postgres.ts). Load averages are recorded before and after each part.
// Usage: npm run bench:events [-- seconds [stored]] (window seconds, default 5; stored events, default 1,000,000);
// BENCH_ROUNDS windows per server (default 7), BENCH_WARM_UP seconds of warm-up per server (default 20),
// BENCH_PARTS a comma list of sqlite-throughput, sqlite-memory, postgres-throughput, postgres-memory.
import { loadavg } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import pg from "pg";
import { createServerKit } from "../server/server-kit.ts";
import { silentLogger, type Reachkit } from "../src/index.ts";
import { startPostgres } from "../test/support/postgres.ts";
import { temporaryDirectory } from "../test/support/temp-dir.ts";
import { interleave, loadResultOf, report, selfHostedNodeFlags, startServerProcess, stopServerProcess, type LoadResult, type ServerProcess } from "./support.ts";

const seconds = Number(process.argv[2] ?? 5);
const stored = Number(process.argv[3] ?? 1_000_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
const warmUpSeconds = Number(process.env.BENCH_WARM_UP ?? 20);
const parts = (process.env.BENCH_PARTS ?? "sqlite-throughput,sqlite-memory,postgres-throughput,postgres-memory").split(",");
const PEOPLE = 10_000;
const CONNECTIONS = 32;
const READS = 1000;
const PATH = "/v1/events/ecommerce/product-view";
const secret = "bench-secret-bench-secret-bench-secret-0";
const MB = 1024 * 1024;
const SERVERS = { bare: join(import.meta.dirname, "servers/bare-events.ts"), reachkit: join(import.meta.dirname, "servers/reachkit-events.ts") };

const phoneOf = (i: number) => `+1555${String(i).padStart(7, "0")}`;
const bodies = Array.from({ length: PEOPLE }, (_, i) =>
  JSON.stringify({
    items: [{ productId: `p-${i % 500}`, productVariantId: `p-${i % 500}-blue`, name: "Mug", productUrl: `https://acme.example/p/${i % 500}`, price: [{ value: 12.5, currency: "USD" }], quantity: 1 }],
    user: { phone: phoneOf(i) },
  }),
);
// One counter over every connection (autocannon runs a `requests` list from its start on each), so the people take turns.
let sent = 0;
const requests: autocannon.Request[] = [{ method: "POST", path: PATH, setupRequest: (request) => ({ ...request, body: bodies[sent++ % PEOPLE] }) }];

const load = () => loadavg().map((value) => Math.round(value * 100) / 100);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Prepared {
  dataDir: string;
  databaseUrl?: string;
  apiKey: string;
  companyId: string;
}

/** A data directory (or PostgreSQL database) with a company and a profile for each of the 10,000 people. */
async function prepare(databaseUrl?: string): Promise<Prepared> {
  const dataDir = temporaryDirectory("bench-events");
  const kit = createServerKit({ dataDir, databaseUrl, publicUrl: "http://localhost", secret, logger: silentLogger() });
  await kit.start({ runJobs: false });
  const { output, company } = await kit.provisionCompany({ name: "Bench Co" });
  const profiles = kit.plugin("profiles");
  for (let i = 0; i < PEOPLE; i++) await profiles.identify(company.id, { phone: phoneOf(i) });
  await kit.stop();
  return { dataDir, databaseUrl, apiKey: output.apiKey as string, companyId: company.id };
}

const envOf = (prepared: Prepared) => ({
  BENCH_DATA_DIR: prepared.dataDir,
  BENCH_DATABASE_URL: prepared.databaseUrl ?? "",
  BENCH_SECRET: secret,
  BENCH_API_KEY: prepared.apiKey,
  NODE_ENV: "production",
});

/** Events posted to a server, for `duration` seconds or `amount` requests, with its CPU time per request. */
async function post(server: ServerProcess, apiKey: string, run: { duration: number } | { amount: number }): Promise<LoadResult> {
  const before = await server.cpuMicros();
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}`,
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    connections: CONNECTIONS,
    requests,
    ...run,
  });
  const after = await server.cpuMicros();
  // A refused event is a bug; a transport error (a timeout on an overloaded machine) is counted and reported.
  if (result.non2xx > 0) throw new Error(`${result.non2xx} non-2xx answers`);
  return loadResultOf(result, after - before);
}

/** Both servers warmed up, then measured in alternated windows; the reachkit server on SQLite or PostgreSQL. */
async function throughput(databaseUrl?: string) {
  const loadBefore = load();
  const prepared = await prepare(databaseUrl);
  const servers = {
    bare: await startServerProcess(SERVERS.bare, envOf(prepared)),
    reachkit: await startServerProcess(SERVERS.reachkit, envOf(prepared), undefined, selfHostedNodeFlags()),
  };
  try {
    const warmUp = { bare: [] as number[], reachkit: [] as number[] };
    for (const side of ["bare", "reachkit"] as const) {
      for (let elapsed = 0; elapsed < warmUpSeconds; elapsed += seconds) warmUp[side].push((await post(servers[side], prepared.apiKey, { duration: seconds })).requestsPerSecond);
    }
    const comparison = await interleave(servers, (server) => post(server, prepared.apiKey, { duration: seconds }), rounds);
    console.log(
      `${databaseUrl ? "postgres" : "sqlite"}: reachkit ${comparison.reachkit.requestsPerSecond} req/s p99 ${comparison.reachkit.p99Ms} ms | ` +
        `bare ${comparison.bare.requestsPerSecond} req/s p99 ${comparison.bare.p99Ms} ms | ratio ${comparison.ratio} (CPU per request ${comparison.cpuRatio})`,
    );
    return { storage: databaseUrl ? "postgres" : "sqlite", baseline: "bare node:http + better-sqlite3 (SQLite)", ...comparison, warmUp, loadBefore, loadAfter: load() };
  } finally {
    await Promise.all(Object.values(servers).map((server) => stopServerProcess(server.child)));
  }
}

/** One server takes `stored` events; its memory after 10,000 and after all; then newest-50 reads of 1,000 people. */
async function memoryAndReads(databaseUrl?: string) {
  const loadBefore = load();
  const prepared = await prepare(databaseUrl);
  let memory = { rss: 0, heapUsed: 0 };
  const onLine = (line: string) => {
    const match = /^MEM (.*)$/.exec(line);
    if (match) memory = JSON.parse(match[1]!) as typeof memory;
  };
  const server = await startServerProcess(SERVERS.reachkit, envOf(prepared), onLine, selfHostedNodeFlags());
  const settledMemory = async () => {
    await sleep(2000);
    await server.cpuMicros(); // prints MEM after CPU
    return { rssMB: Math.round(memory.rss / MB), heapUsedMB: Math.round(memory.heapUsed / MB) };
  };
  let first: LoadResult;
  let rest: LoadResult;
  let after10k: Awaited<ReturnType<typeof settledMemory>>;
  let afterAll: Awaited<ReturnType<typeof settledMemory>>;
  try {
    first = await post(server, prepared.apiKey, { amount: 10_000 });
    after10k = await settledMemory();
    rest = await post(server, prepared.apiKey, { amount: stored - 10_000 });
    afterAll = await settledMemory();
  } finally {
    await stopServerProcess(server.child);
  }
  const reads = await newestFifty(prepared);
  // PostgreSQL plans by statistics; autovacuum gathers them in a live database, at its own pace: measured both ways.
  const afterAnalyze = databaseUrl === undefined ? undefined : (await analyze(databaseUrl), (await newestFifty(prepared)).latency);
  const result = {
    storage: databaseUrl ? "postgres" : "sqlite",
    storedEvents: reads.storedEvents,
    ingestion: { first10k: first, rest },
    memory: { after10k, afterAll, rssRatio: Math.round((afterAll.rssMB / after10k.rssMB) * 100) / 100, target: "within 20%" },
    newestFifty: { ...reads.latency, target: "p99 under 5 ms" },
    ...(afterAnalyze ? { newestFiftyAfterAnalyze: afterAnalyze } : {}),
    loadBefore,
    loadAfter: load(),
  };
  console.log(
    `${result.storage}: ${result.storedEvents} events; RSS ${after10k.rssMB} MB after 10,000, ${afterAll.rssMB} MB after all (x${result.memory.rssRatio}); ` +
      `newest 50: p50 ${reads.latency.p50Ms} ms, p99 ${reads.latency.p99Ms} ms (CPU p50 ${reads.latency.cpuP50Ms} ms, p99 ${reads.latency.cpuP99Ms} ms)` +
      (afterAnalyze ? `; after ANALYZE p50 ${afterAnalyze.p50Ms} ms, p99 ${afterAnalyze.p99Ms} ms` : ""),
  );
  return result;
}

async function analyze(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query("ANALYZE");
  } finally {
    await client.end();
  }
}

/** The profile of a phone found and its newest 50 events read, for 1,000 people in turn, through the profiles service. */
async function newestFifty(prepared: Prepared) {
  const kit: Reachkit = createServerKit({ dataDir: prepared.dataDir, databaseUrl: prepared.databaseUrl, publicUrl: "http://localhost", secret, logger: silentLogger() });
  await kit.start({ runJobs: false });
  try {
    const profiles = kit.plugin("profiles");
    let eventsRead = 0;
    const read = async (i: number) => {
      const profileId = await profiles.find(prepared.companyId, { kind: "phone", value: phoneOf(i) });
      const page = await profiles.events(prepared.companyId, profileId!, { first: 50 });
      if (page.events.length === 0) throw new Error(`${phoneOf(i)} has no events`);
      eventsRead += page.events.length;
    };
    for (let i = 0; i < 100; i++) await read(i); // warm-up
    eventsRead = 0;
    // Wall time per read, and this process's CPU time per read: on a machine whose load average is
    // several times its core count, the wall time's tail is mostly time spent waiting for a core.
    const times: number[] = [];
    const cpuTimes: number[] = [];
    for (let n = 0; n < READS; n++) {
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      await read((n * 7919) % PEOPLE);
      times.push(performance.now() - started);
      const cpu = process.cpuUsage(cpuBefore);
      cpuTimes.push((cpu.user + cpu.system) / 1000);
    }
    const at = (values: number[], q: number) => {
      const sorted = [...values].sort((a, b) => a - b);
      return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 1000) / 1000;
    };
    return {
      storedEvents: await kit.storage.collection("profiles_events").count(),
      latency: {
        reads: READS,
        eventsPerRead: eventsRead / READS,
        p50Ms: at(times, 0.5),
        p99Ms: at(times, 0.99),
        maxMs: at(times, 1),
        cpuP50Ms: at(cpuTimes, 0.5),
        cpuP99Ms: at(cpuTimes, 0.99),
      },
    };
  } finally {
    await kit.stop();
  }
}

const figures: Record<string, unknown> = { seconds, rounds, warmUpSeconds, connections: CONNECTIONS, people: PEOPLE, request: `POST ${PATH}`, target: 0.7 };
if (parts.includes("sqlite-throughput")) figures.sqliteThroughput = await throughput();
if (parts.includes("sqlite-memory")) figures.sqliteMemory = await memoryAndReads();
if (parts.some((part) => part.startsWith("postgres"))) {
  const cluster = await startPostgres();
  try {
    if (parts.includes("postgres-throughput")) figures.postgresThroughput = await throughput(await cluster.createDatabase());
    if (parts.includes("postgres-memory")) figures.postgresMemory = await memoryAndReads(await cluster.createDatabase());
  } finally {
    cluster.stop();
  }
}
report("events", figures);
