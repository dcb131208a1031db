// Subscriptions throughput with 100,000 subscribers stored, each figure beside a bare node:http + better-sqlite3
// baseline doing the same reads and writes, measured in alternation in the same run:
//   1. eligibility lookups per second (GET /v1/subscriptions, 1,000 different phones in turn),
//   2. opt-ins accepted per second (POST /v1/subscriptions, rate limits lifted), twice: fresh phones (every
//      request a number never seen before: the main figure) and repeats (1,000 subscribed phones in turn),
//   3. median latency of one GraphQL query of 50 aliased users (one connection, sequential),
//   4. opt-in processing, fresh and repeats: after each round of reachkit in 2, reachkit with its job runner is
//      started over the opt-ins both sides accepted in that round (the same job rows) and timed until none is
//      left: jobs per second and server CPU per job, beside the rate and CPU per request reachkit accepted them
//      at in the same round (processing must keep up); the median of the rounds' ratios.
// Usage: npm run bench:subscriptions [-- seconds [parts]], parts a comma list of eligibility, opt-ins, graphql
// (default all three).
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import autocannon from "autocannon";
import Database from "better-sqlite3";
import { createServerKit } from "../server/server-kit.ts";
import { silentLogger } from "../src/index.ts";
import { freshOptIns, repeatedOptIns } from "./opt-in-requests.ts";
import { seedSubscribers } from "./seed.ts";
import { alternate, loadResultOf, report, startServerProcess, stopServerProcess, type LoadResult } from "./support.ts";
import { temporaryDirectory } from "../test/support/temp-dir.ts";

const seconds = Number(process.argv[2] ?? 5);
const parts = new Set((process.argv[3] ?? "eligibility,opt-ins,graphql").split(","));
const connections = 32;
const SUBSCRIBER_COUNT = 100_000;
const ALIASES = 50;
const dataDir = temporaryDirectory("bench-subscriptions");
const secret = "bench-secret-bench-secret-bench-secret-0";
const seededPhone = (i: number) => `+1555${String(i).padStart(7, "0")}`;

const setup = createServerKit({ dataDir, publicUrl: "http://localhost", secret, logger: silentLogger() });
await setup.start({ runJobs: false });
const { output, company } = await setup.provisionCompany({ name: "Bench Co" });
await seedSubscribers(setup.storage, company.id, SUBSCRIBER_COUNT, seededPhone, (i) => (i % 4 === 0 ? "pending" : "active"));
await setup.stop();

const headers = { authorization: `Bearer ${output.apiKey as string}`, "content-type": "application/json" };
// Both servers run as deployed: NODE_ENV=production turns off graphql-js's development-only checks.
const env = { BENCH_DATA_DIR: dataDir, BENCH_SECRET: secret, NODE_ENV: "production" };
const servers = {
  bare: join(import.meta.dirname, "servers/bare-subscriptions.ts"),
  reachkit: join(import.meta.dirname, "servers/reachkit-subscriptions.ts"),
};
const spread = (count: number) => Array.from({ length: count }, (_, i) => Math.floor((i * SUBSCRIBER_COUNT) / count));

const lookups: autocannon.Request[] = spread(1000).map((i) => ({ method: "GET", path: `/v1/subscriptions?phone=${encodeURIComponent(seededPhone(i))}` }));
// Seeded phones, a quarter pending and the rest active: every opt-in of them repeats one.
const repeats = repeatedOptIns(spread(1000).map(seededPhone));
const aliases = spread(ALIASES).map((i) => `u${i}: user(phone: "${seededPhone(i)}") { subscriptions { subscriptionEligibilities { subscription { channel type } eligibility { isEligible } } } }`);
const graphqlQuery: autocannon.Request = { method: "POST", path: "/v1/graphql", body: JSON.stringify({ query: `{ viewer { installedApplication { installerCompany { ${aliases.join(" ")} } } } }` }) };

/** Cycles through `requests` for `seconds`; the figures include the server's CPU time per request. */
async function cycle(url: string, requests: autocannon.Request[], seconds: number, connections: number) {
  return autocannon({ url, headers, duration: seconds, connections, requests });
}

async function measure(script: string, requests: () => autocannon.Request[], connectionCount: number): Promise<LoadResult> {
  const server = await startServerProcess(script, env);
  const url = `http://127.0.0.1:${server.port}`;
  await cycle(url, requests(), 2, connectionCount); // warm-up
  const before = await server.cpuMicros();
  const result = await cycle(url, requests(), seconds, connectionCount);
  const after = await server.cpuMicros();
  await stopServerProcess(server.child);
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${script}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return loadResultOf(result, after - before);
}

interface Processing {
  jobs: number;
  seconds: number;
  jobsPerSecond: number;
  cpuMicrosPerJob: number;
}

/** Starts reachkit with its job runner over the queued opt-ins and waits until none is left. */
async function processOptIns(): Promise<Processing> {
  const db = new Database(join(dataDir, "reachkit.db"), { readonly: true });
  // Every job queued before this instant is an accepted opt-in; the texts their processing queues come after.
  const backlogUntil = Date.now();
  // The job runner's own lane: the opt-ins, not the texts they queue (their sending runs in a lane of its own, at the sender's rate).
  const left = db.prepare(`SELECT count(*) FROM reachkit_jobs WHERE "f_status" IN ('queued', 'running') AND "f_lane" IS NULL AND "f_runAt" < ?`).pluck();
  const server = await startServerProcess(servers.reachkit, { ...env, BENCH_RUN_JOBS: "1" });
  const started = performance.now();
  const cpuBefore = await server.cpuMicros();
  const jobs = left.get(backlogUntil) as number;
  while ((left.get(backlogUntil) as number) > 0) await sleep(100);
  const seconds = (performance.now() - started) / 1000;
  const cpu = (await server.cpuMicros()) - cpuBefore;
  await stopServerProcess(server.child);
  db.close();
  return { jobs, seconds: Math.round(seconds * 100) / 100, jobsPerSecond: Math.round(jobs / seconds), cpuMicrosPerJob: Math.round((cpu / jobs) * 10) / 10 };
}

interface Round {
  accepted: LoadResult;
  processed: Processing;
  ratio: number;
  cpuRatio: number;
}

/**
 * Opt-ins accepted by each side in alternated rounds, and after each round of reachkit's, their processing.
 * Each round's processing beside the acceptance of the same round: the machine's speed drifts between rounds, so a
 * ratio of one round's processing to another round's acceptance says nothing.
 */
async function optInsAndProcessing(requests: () => autocannon.Request[]) {
  const paired: Round[] = [];
  const acceptance = await alternate(servers, async (script) => {
    const accepted = await measure(script, requests, connections);
    // Processed right after they were accepted: both rates meet the same machine.
    if (script === servers.reachkit) {
      const processed = await processOptIns();
      paired.push({ accepted, processed, ratio: processed.jobsPerSecond / accepted.requestsPerSecond, cpuRatio: (accepted.cpuMicrosPerRequest ?? 0) / processed.cpuMicrosPerJob });
    }
    return accepted;
  });
  return { acceptance, processing: processingFigures(paired) };
}

const medianOf = (values: number[]) => Math.round([...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]! * 100) / 100;

function processingFigures(paired: Round[]) {
  const median = [...paired].sort((a, b) => a.ratio - b.ratio)[Math.floor(paired.length / 2)]!;
  return {
    ...median.processed,
    acceptedPerSecond: median.accepted.requestsPerSecond,
    acceptCpuMicrosPerRequest: median.accepted.cpuMicrosPerRequest,
    // Over 1: the job runner keeps up with POST /v1/subscriptions at full speed.
    ratio: medianOf(paired.map((round) => round.ratio)),
    // Acceptance's CPU per request over processing's per job: the ratio a quiet machine would show.
    cpuRatio: medianOf(paired.map((round) => round.cpuRatio)),
    target: 1,
    rounds: paired.map(({ accepted, processed, ratio, cpuRatio }) => ({
      accepted: accepted.requestsPerSecond,
      processed: processed.jobsPerSecond,
      ratio: Math.round(ratio * 100) / 100,
      acceptCpuMicros: accepted.cpuMicrosPerRequest,
      processCpuMicros: processed.cpuMicrosPerJob,
      cpuRatio: Math.round(cpuRatio * 100) / 100,
    })),
  };
}

const figures: Record<string, unknown> = { subscribers: SUBSCRIBER_COUNT, seconds, connections };
if (parts.has("eligibility")) {
  figures.eligibility = { request: "GET /v1/subscriptions?phone=", ...(await alternate(servers, (script) => measure(script, () => lookups, connections))), target: 0.7 };
}
if (parts.has("opt-ins")) {
  const fresh = await optInsAndProcessing(freshOptIns);
  const repeated = await optInsAndProcessing(() => repeats);
  figures.optIn = { request: "POST /v1/subscriptions, fresh phones (202; job runner off in both)", ...fresh.acceptance, target: 0.7 };
  figures.optInRepeats = { request: "POST /v1/subscriptions, 1,000 subscribed phones in turn (202; job runner off in both)", ...repeated.acceptance };
  const what = "each round's accepted opt-ins, processed by reachkit's job runner on SQLite, beside the rate reachkit accepted them at in that round; the round of median ratio";
  figures.optInProcessing = { what: `${what}; fresh phones (subscriber, subscription, change record, "Reply Y" text queued)`, ...fresh.processing };
  figures.optInRepeatsProcessing = { what: `${what}; repeats (change record, a text at most once per phone and kind within the repeat window)`, ...repeated.processing };
  for (const [name, processing] of [["fresh phones", fresh.processing], ["repeats", repeated.processing]] as const) {
    console.log(
      `opt-in processing, ${name}: ${processing.ratio} of acceptance (rounds ${processing.rounds.map((r) => r.ratio).join(" / ")}); ` +
        `processed ${processing.rounds.map((r) => r.processed).join(" / ")} against accepted ${processing.rounds.map((r) => r.accepted).join(" / ")} a second; ` +
        `CPU per opt-in processing ${processing.rounds.map((r) => r.processCpuMicros).join(" / ")} µs against accepting ${processing.rounds.map((r) => r.acceptCpuMicros).join(" / ")} µs (CPU ratio ${processing.cpuRatio})`,
    );
  }
}
if (parts.has("graphql")) {
  const graphql = await alternate(servers, (script) => measure(script, () => [graphqlQuery], 1));
  figures.graphql50Aliases = {
    request: `POST /v1/graphql, ${ALIASES} aliased users, one connection`,
    reachkitMedianMs: graphql.reachkit.p50Ms,
    bareMedianMs: graphql.bare.p50Ms,
    ...graphql,
  };
}
report("subscriptions", figures);
