// Each HTTP adapter (node:http, Express, Fastify) against the same requests written bare on that framework
// (bare handlers in bench/servers/bare-handlers.ts, same database), alternated in the same run.
// Prints req/s, p99 latency and the ratio per adapter and request (medians of the alternated rounds);
// writes bench/results/http-adapters.json.
// Usage: npm run bench:http-adapters [-- seconds [framework...]]; BENCH_ROUNDS sets the rounds (default 5).
import { ME_SERVERS, prepareMeData } from "./me-servers.ts";
import { alternate, measureServer, report, startServerProcess, stopServerProcess } from "./support.ts";

const seconds = Number(process.argv[2] ?? 10);
const frameworks = process.argv.length > 3 ? process.argv.slice(3) : ["node", "express", "fastify"];
const connections = 32;
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);

// One line per request, each with its bare handler in bench/servers/bare-handlers.ts.
const requests = [
  { name: "GET /v1/me", path: "/v1/me" },
  // The phone has no subscription: both sides do the token, scope, phone check and the lookup, and answer an empty list.
  { name: "GET /v1/subscriptions?phone=", path: "/v1/subscriptions?phone=%2B15555550100" },
];

const { env, headers } = await prepareMeData();
const results: Array<Record<string, unknown>> = [];
for (const framework of frameworks) {
  for (const request of requests) {
    const result = await alternate(ME_SERVERS, async (script) => {
      const server = await startServerProcess(script, { ...env, BENCH_FRAMEWORK: framework });
      const measured = await measureServer(server, { path: request.path, headers, seconds, connections });
      await stopServerProcess(server.child);
      if (measured.errors > 0 || measured.non2xx > 0) throw new Error(`${framework} ${script}: ${measured.errors} errors, ${measured.non2xx} non-2xx answers`);
      return measured;
    }, rounds);
    results.push({ framework, request: request.name, ...result });
    console.log(
      `${framework.padEnd(8)} ${request.name.padEnd(32)} reachkit ${result.reachkit.requestsPerSecond} req/s p99 ${result.reachkit.p99Ms} ms | ` +
        `bare ${result.bare.requestsPerSecond} req/s p99 ${result.bare.p99Ms} ms | ratio ${result.ratio} (CPU per request ${result.cpuRatio})`,
    );
  }
}
report("http-adapters", { seconds, rounds, connections, target: 0.85, results });
