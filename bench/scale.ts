// Scale-out: the self-hosted server (server/main.ts, job runner on, as deployed) with one, two and
// three processes on one PostgreSQL database, beside the single SQLite process, measured in the same run:
//   1. eligibility reads per second (GET /v1/subscriptions?phone=, 1,000 different phones of 20,000 stored),
//   2. opt-ins accepted per second (POST /v1/subscriptions, 202, new phones, rate limits lifted).
// The load generator (autocannon, one instance per process) runs on the same machine: on a 2-core machine
// every added process competes with it and with PostgreSQL for the same two cores.
// Usage: npm run bench:scale [-- seconds]
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import autocannon from "autocannon";
import { createServerKit } from "../server/server-kit.ts";
import { silentLogger } from "../src/index.ts";
import { startPostgres } from "../test/support/postgres.ts";
import { seedSubscribers } from "./seed.ts";
import { report } from "./support.ts";
import { temporaryDirectory } from "../test/support/temp-dir.ts";

const seconds = Number(process.argv[2] ?? 5);
const CONNECTIONS_PER_PROCESS = 16;
const SUBSCRIBERS = 20_000;
const secret = "bench-secret-bench-secret-bench-secret-0";
const seededPhone = (i: number) => `+1555${String(i).padStart(7, "0")}`;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

async function startProcess(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "../server/main.ts")], {
    env: { ...process.env, ...env, PORT: String(port), LOG_LEVEL: "warn", NODE_ENV: "production" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error("a server exited during start");
    const healthy = await fetch(`${url}/healthz`).then((r) => r.ok, () => false);
    if (healthy) return { child, url };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function stopProcess(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

async function seed(databaseUrl: string | undefined): Promise<{ dataDir: string; apiKey: string }> {
  const dataDir = temporaryDirectory("bench-scale");
  const kit = createServerKit({ dataDir, databaseUrl, publicUrl: "http://localhost", secret, logger: silentLogger() });
  await kit.start({ runJobs: false });
  const { output, company } = await kit.provisionCompany({ name: "Bench Co" });
  await seedSubscribers(kit.storage, company.id, SUBSCRIBERS, seededPhone);
  await kit.stop();
  return { dataDir, apiKey: output.apiKey as string };
}

const lookups: autocannon.Request[] = Array.from({ length: 1000 }, (_, i) => ({
  method: "GET",
  path: `/v1/subscriptions?phone=${encodeURIComponent(seededPhone(Math.floor((i * SUBSCRIBERS) / 1000)))}`,
}));
let optInBatch = 0;
const optIns = (): autocannon.Request[] => {
  optInBatch++;
  return Array.from({ length: 2000 }, (_, i) => ({
    method: "POST",
    path: "/v1/subscriptions",
    body: JSON.stringify({ user: { phone: `+1666${String(optInBatch).padStart(2, "0")}${String(i).padStart(5, "0")}` }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING" }),
  }));
};

/** Loads every process at once (one autocannon each) and sums their throughput. */
async function loadAll(urls: string[], apiKey: string, requests: () => autocannon.Request[], duration: number) {
  const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
  const results = await Promise.all(urls.map((url) => autocannon({ url, headers, duration, connections: CONNECTIONS_PER_PROCESS, requests: requests() })));
  const failures = results.reduce((n, r) => n + r.non2xx + r.errors, 0);
  if (failures > 0) throw new Error(`${failures} failed requests`);
  return { requestsPerSecond: Math.round(results.reduce((n, r) => n + r.requests.average, 0)), p50Ms: Math.max(...results.map((r) => r.latency.p50)) };
}

async function measure(processes: number, databaseUrl: string | undefined) {
  const { dataDir, apiKey } = await seed(databaseUrl);
  const env: Record<string, string> = { REACHKIT_DATA_DIR: dataDir, REACHKIT_SECRET: secret, REACHKIT_RATE_LIMITS: "opt-in=unlimited,default=unlimited", REACHKIT_SMS_PER_SECOND: "100000" };
  if (databaseUrl) env.REACHKIT_DATABASE_URL = databaseUrl;
  const servers = await Promise.all(Array.from({ length: processes }, () => startProcess(env)));
  try {
    const urls = servers.map((s) => s.url);
    await loadAll(urls, apiKey, () => lookups, 1); // warm-up
    const eligibility = await loadAll(urls, apiKey, () => lookups, seconds);
    const optIn = await loadAll(urls, apiKey, optIns, seconds);
    return { processes, eligibility, optIn };
  } finally {
    await Promise.all(servers.map((s) => stopProcess(s.child)));
  }
}

const cluster = await startPostgres();
try {
  const sqlite = await measure(1, undefined);
  const postgres: Awaited<ReturnType<typeof measure>>[] = [];
  for (const processes of [1, 2, 3]) postgres.push(await measure(processes, await cluster.createDatabase()));
  const factor = (figure: "eligibility" | "optIn") =>
    postgres.slice(1).map((p, i) => Math.round((p[figure].requestsPerSecond / postgres[i][figure].requestsPerSecond) * 100) / 100);
  report("scale", {
    seconds,
    subscribers: SUBSCRIBERS,
    connectionsPerProcess: CONNECTIONS_PER_PROCESS,
    sqliteOneProcess: sqlite,
    postgres,
    scalingPerAddedProcess: { eligibility: factor("eligibility"), optIn: factor("optIn") },
  });
} finally {
  cluster.stop();
}
