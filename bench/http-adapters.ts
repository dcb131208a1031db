// Each HTTP adapter (node:http, Express, Fastify) against the same requests written bare on that framework
// (bare handlers in bench/servers/bare-handlers.ts, same database). Per framework both servers run side by
// side; per request each is warmed up (windows of load until WARM_UP_SECONDS), then both are measured in
// short alternated windows (support.ts `interleave`). Prints req/s, p99 latency and the ratio per adapter and
// request (medians of the windows); writes bench/results/http-adapters.json, warm-up windows included.
// Usage: npm run bench:http-adapters [-- seconds [framework...]] (seconds per window, default 5);
// BENCH_ROUNDS sets the windows per server (default 9).
import { ME_SERVERS, prepareMeData } from "./me-servers.ts";
import { interleave, measureServer, report, startServerProcess, stopServerProcess, type ServerProcess } from "./support.ts";

const seconds = Number(process.argv[2] ?? 5);
const frameworks = process.argv.length > 3 ? process.argv.slice(3) : ["node", "express", "fastify"];
const connections = 32;
const rounds = Number(process.env.BENCH_ROUNDS ?? 9);
// On this 2-core machine under load, a fresh reachkit server takes 20 to 30 s to reach its steady state
// (eligibility: 129 µs of CPU per request in its first 5 s window, 75 to 79 µs from the third on), the bare
// servers less (most likely V8's optimising compiler: it runs on a background thread that the load leaves little CPU).
const WARM_UP_SECONDS = 30;

// One line per request, each with its bare handler in bench/servers/bare-handlers.ts.
const requests = [
  { name: "GET /v1/me", path: "/v1/me" },
  // The phone has no subscription: both sides do the token, scope, phone check and the lookup, and answer an empty list.
  { name: "GET /v1/subscriptions?phone=", path: "/v1/subscriptions?phone=%2B15555550100" },
];

const { env, headers } = await prepareMeData();
const results: Array<Record<string, unknown>> = [];
for (const framework of frameworks) {
  const servers = {
    bare: await startServerProcess(ME_SERVERS.bare, { ...env, BENCH_FRAMEWORK: framework }),
    reachkit: await startServerProcess(ME_SERVERS.reachkit, { ...env, BENCH_FRAMEWORK: framework }),
  };
  try {
    for (const request of requests) {
      const options = { path: request.path, headers, seconds, connections };
      const warmUp = { bare: [] as number[], reachkit: [] as number[] };
      for (const side of ["bare", "reachkit"] as const) {
        for (let elapsed = 0; elapsed < WARM_UP_SECONDS; elapsed += seconds) {
          warmUp[side].push((await measureServer(servers[side], { ...options, warmUpSeconds: 0 })).requestsPerSecond);
        }
      }
      const result = await interleave(servers, async (server: ServerProcess) => {
        const measured = await measureServer(server, { ...options, warmUpSeconds: 0 });
        if (measured.errors > 0 || measured.non2xx > 0) throw new Error(`${framework}: ${measured.errors} errors, ${measured.non2xx} non-2xx answers`);
        return measured;
      }, rounds);
      results.push({ framework, request: request.name, ...result, warmUp });
      console.log(
        `${framework.padEnd(8)} ${request.name.padEnd(32)} reachkit ${result.reachkit.requestsPerSecond} req/s p99 ${result.reachkit.p99Ms} ms | ` +
          `bare ${result.bare.requestsPerSecond} req/s p99 ${result.bare.p99Ms} ms | ratio ${result.ratio} (CPU per request ${result.cpuRatio})`,
      );
    }
  } finally {
    await Promise.all(Object.values(servers).map((server) => stopServerProcess(server.child)));
  }
}
report("http-adapters", { seconds, warmUpSeconds: WARM_UP_SECONDS, rounds, connections, target: 0.85, results });
