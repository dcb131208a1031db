// GET /v1/me throughput through the node:http adapter, beside a bare node:http + better-sqlite3 baseline
// doing the same token-hash lookup on the same database, in the same run. Usage: npm run bench:http [-- seconds]
// (bench/http-adapters.ts measures the Express and Fastify adapters the same way.)
import { ME_SERVERS, prepareMeData } from "./me-servers.ts";
import { alternate, measureServer, report, startServerProcess, stopServerProcess } from "./support.ts";

const seconds = Number(process.argv[2] ?? 10);
const connections = 32;
const { env, headers } = await prepareMeData();

const result = await alternate(ME_SERVERS, async (script) => {
  const server = await startServerProcess(script, env);
  const measured = await measureServer(server, { path: "/v1/me", headers, seconds, connections });
  await stopServerProcess(server.child);
  return measured;
});
report("http", { request: "GET /v1/me", seconds, connections, ...result, target: 0.8 });
