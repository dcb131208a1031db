// Sustained load on the real self-hosted server (server/main.ts, its own process, SQLite in a
// temporary data directory), on loopback: a mixed workload of eligibility reads, opt-ins, transactional
// messages, GraphQL queries and catalog uploads, from several companies at once, for SOAK_SECONDS (60).
// Reports requests, answers by status, p50/p99 latency, and the server's RSS after a warm-up
// (SOAK_WARMUP_SECONDS, 10: the baseline) and at the end. Targets: no 5xx, RSS growth under 20%.
// Usage: npm run bench:soak            (SOAK_SECONDS=10 SOAK_WARMUP_SECONDS=3 npm run bench:soak for a short dev run)
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { createServerKit } from "../server/server-kit.ts";
import { silentLogger } from "../src/index.ts";
import { productLine, random } from "./catalog-file.ts";
import { seedSubscribers } from "./seed.ts";
import { report } from "./support.ts";
import { temporaryDirectory } from "../test/support/temp-dir.ts";

const SECONDS = Number(process.env.SOAK_SECONDS ?? 60);
const WARMUP_SECONDS = Number(process.env.SOAK_WARMUP_SECONDS ?? 10);
/** Clients with a request in flight at all times. */
const CONCURRENCY = 16;
const COMPANIES = 4;
const SUBSCRIBERS_PER_COMPANY = 5_000;
/** Opt-ins per second per company: under the opt-in rate limit (10 a second per token). */
const OPT_INS_PER_SECOND = 8;
/** A catalog upload of this many products every CATALOG_EVERY_MS, one company after another. */
const CATALOG_PRODUCTS = 2_000;
const CATALOG_EVERY_MS = 15_000;
const SECRET = "soak-secret-soak-secret-soak-secret-0000";

const dataDir = temporaryDirectory("soak");
/** Assigned (New York) numbers: the messages route refuses unassigned ones such as +1555. */
const activePhone = (company: number, i: number) => `+1914${2 + company}${String(i).padStart(6, "0")}`;

interface Company {
  index: number;
  apiKey: string;
  legacyToken: string;
  optInTokens: number;
}

// Companies with stored subscribers, provisioned before the server starts.
const setup = createServerKit({ dataDir, publicUrl: "http://127.0.0.1", secret: SECRET, logger: silentLogger() });
await setup.start({ runJobs: false });
const companies: Company[] = [];
for (let index = 0; index < COMPANIES; index++) {
  const { output, company } = await setup.provisionCompany({ name: `Soak ${index}` });
  await seedSubscribers(setup.storage, company.id, SUBSCRIBERS_PER_COMPANY, (i) => activePhone(index, i));
  companies.push({ index, apiKey: output.apiKey as string, legacyToken: output.legacyToken as string, optInTokens: OPT_INS_PER_SECOND });
}
await setup.stop();

const port = await freePort();
const server = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "../server/main.ts")], {
  env: {
    ...process.env,
    PORT: String(port),
    REACHKIT_DATA_DIR: dataDir,
    REACHKIT_SECRET: SECRET,
    REACHKIT_PUBLIC_URL: `http://127.0.0.1:${port}`,
    // Texts to a file, warnings and errors only on standard output: the soak measures the server, not a terminal.
    REACHKIT_SMS_LOG: join(dataDir, "sent-sms.jsonl"),
    LOG_LEVEL: "warn",
    NODE_ENV: "production",
  },
  stdio: ["ignore", "pipe", "inherit"],
});
const serverLogs: string[] = [];
server.stdout!.setEncoding("utf8").on("data", (chunk: string) => serverLogs.push(...chunk.split("\n").filter(Boolean)));
const base = `http://127.0.0.1:${port}`;
await waitForHealth();

const statuses = new Map<string, number>();
/** The first failed answer of each route, to say what the 4xx were. */
const firstFailures = new Map<string, string>();
let latencies: number[] = [];
let requests = 0;
let optInCounter = 0;
let messageCounter = 0;
let running = true;

/** One timed request; its answer's text (undefined on a network error). */
async function call(method: string, url: string, token: string | undefined, body?: unknown): Promise<{ status: number; text: string } | undefined> {
  const started = performance.now();
  let status: string;
  let answer: { status: number; text: string } | undefined;
  try {
    const json = body !== undefined && typeof body !== "string";
    const response = await fetch(url.startsWith("http") ? url : `${base}${url}`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(json ? { "content-type": "application/json" } : {}) },
      ...(body === undefined ? {} : { body: json ? JSON.stringify(body) : (body as string) }),
    });
    answer = { status: response.status, text: await response.text() };
    if (response.status >= 400 && !firstFailures.has(`${method} ${url.split("?")[0]}`)) firstFailures.set(`${method} ${url.split("?")[0]}`, `${response.status} ${answer.text.slice(0, 300)}`);
    status = String(response.status);
  } catch (error) {
    const cause = (error as Error & { cause?: { code?: string; message?: string } }).cause;
    status = `network error: ${cause?.code ?? cause?.message ?? (error as Error).message} (${method} ${url.split("?")[0]})`;
  }
  latencies.push(performance.now() - started);
  requests++;
  statuses.set(status, (statuses.get(status) ?? 0) + 1);
  return answer;
}

/** Five users by phone, as clients write it: one query text, the phones as variables (the server keeps its parsed document). */
const GRAPHQL_QUERY = `query (${[0, 1, 2, 3, 4].map((n) => `$p${n}: String`).join(", ")}) { viewer { installedApplication { installerCompany { id ${[0, 1, 2, 3, 4]
  .map((n) => `u${n}: user(phone: $p${n}) { subscriptions { subscriptionEligibilities { subscription { channel type } eligibility { isEligible } } } }`)
  .join(" ")} } } } }`;
const graphqlQuery = (company: number) => ({
  query: GRAPHQL_QUERY,
  variables: Object.fromEntries([0, 1, 2, 3, 4].map((n) => [`p${n}`, activePhone(company, Math.floor(Math.random() * SUBSCRIBERS_PER_COMPANY))])),
});

/** One request of the mix: 45% eligibility reads, 20% GraphQL, 20% messages, opt-ins as the rate allows. */
async function oneRequest(company: Company): Promise<void> {
  const roll = Math.random();
  const phone = activePhone(company.index, Math.floor(Math.random() * SUBSCRIBERS_PER_COMPANY));
  if (roll < 0.15 && company.optInTokens >= 1) {
    company.optInTokens--;
    const optIn = { user: { phone: `+1917${2 + company.index}${String(optInCounter++).padStart(6, "0")}` }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING" };
    await call("POST", "/v1/subscriptions", company.apiKey, optIn);
  } else if (roll < 0.35) {
    await call("POST", "/1/messages", company.legacyToken, { to: phone, body: `Order ${messageCounter++} has shipped.`, type: "TRANSACTIONAL" });
  } else if (roll < 0.55) {
    await call("POST", "/v1/graphql", company.apiKey, graphqlQuery(company.index));
  } else {
    await call("GET", `/v1/subscriptions?phone=${encodeURIComponent(phone)}`, company.apiKey);
  }
}

let catalogRound = 0;
async function catalogUpload(): Promise<void> {
  const company = companies[catalogRound++ % companies.length]!;
  // Made before the upload is created: building it blocks this client's event loop, and a PUT sent after
  // that pause could go out on a pooled connection the server had meanwhile closed as idle.
  const next = random(catalogRound);
  const file = Array.from({ length: CATALOG_PRODUCTS }, (_, i) => `${productLine(i, next)}\n`).join("");
  const created = await call("POST", "/v1/product-catalog/uploads", company.apiKey, {});
  if (created?.status !== 200) return;
  const { uploadUrl } = JSON.parse(created.text) as { uploadUrl: string };
  await call("PUT", uploadUrl, undefined, file);
}

async function drive(seconds: number): Promise<void> {
  running = true;
  const until = Date.now() + seconds * 1000;
  const refill = setInterval(() => {
    for (const company of companies) company.optInTokens = OPT_INS_PER_SECOND;
  }, 1000);
  const uploads = setInterval(() => void catalogUpload(), CATALOG_EVERY_MS);
  void catalogUpload();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      for (let n = worker; running && Date.now() < until; n++) await oneRequest(companies[n % companies.length]!);
    }),
  );
  clearInterval(refill);
  clearInterval(uploads);
}

console.error(`soak: warm-up ${WARMUP_SECONDS} s`);
await drive(WARMUP_SECONDS);
const rssAfterWarmup = rssBytes(server.pid!);
statuses.clear();
latencies = [];
requests = 0;
const rssSamples: number[] = [rssAfterWarmup];
const sampler = setInterval(() => rssSamples.push(rssBytes(server.pid!)), 5_000);
console.error(`soak: ${SECONDS} s`);
await drive(SECONDS);
clearInterval(sampler);
const rssAtEnd = rssBytes(server.pid!);
rssSamples.push(rssAtEnd);
running = false;

const exited = once(server, "exit");
server.kill("SIGTERM");
await exited;

latencies.sort((a, b) => a - b);
const percentile = (p: number) => Math.round((latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0) * 10) / 10;
const byStatus = Object.fromEntries([...statuses].sort());
const serverErrors = [...statuses].filter(([status]) => !/^[234]\d\d$/.test(status)).reduce((sum, [, count]) => sum + count, 0);
const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
const growth = Math.round(((rssAtEnd - rssAfterWarmup) / rssAfterWarmup) * 1000) / 10;
const smsLog = join(dataDir, "sent-sms.jsonl");
report("soak", {
  seconds: SECONDS,
  warmupSeconds: WARMUP_SECONDS,
  concurrency: CONCURRENCY,
  companies: COMPANIES,
  requests,
  requestsPerSecond: Math.round(requests / SECONDS),
  byStatus,
  fiveXxOrNetworkErrors: serverErrors,
  p50Ms: percentile(50),
  p99Ms: percentile(99),
  // The baseline: the same server's RSS after the warm-up.
  rssAfterWarmupMb: mb(rssAfterWarmup),
  rssAtEndMb: mb(rssAtEnd),
  rssMaxMb: mb(Math.max(...rssSamples)),
  rssGrowthPercent: growth,
  rssSamplesMb: rssSamples.map(mb),
  textsSent: existsSync(smsLog) ? readFileSync(smsLog, "utf8").split("\n").filter(Boolean).length : 0,
  firstFailureByRoute: Object.fromEntries(firstFailures),
  serverWarningsOrErrors: serverLogs.length,
  targets: { noServerErrors: serverErrors === 0, rssGrowthUnder20Percent: growth < 20 },
});
if (serverLogs.length > 0) console.error(serverLogs.slice(0, 10).join("\n"));

/** The resident set size of a process: Linux's /proc, else ps. */
function rssBytes(pid: number): number {
  const status = `/proc/${pid}/status`;
  if (existsSync(status)) return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(status, "utf8"))![1]) * 1024;
  return Number(execFileSync("ps", ["-o", "rss=", "-p", String(pid)], { encoding: "utf8" }).trim()) * 1024;
}

async function freePort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, "127.0.0.1");
  await once(probe, "listening");
  const { port } = probe.address() as { port: number };
  probe.close();
  await once(probe, "close");
  return port;
}

async function waitForHealth(): Promise<void> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
    const healthy = await fetch(`http://127.0.0.1:${port}/healthz`).then((response) => response.ok).catch(() => false);
    if (healthy) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the server did not start");
}
