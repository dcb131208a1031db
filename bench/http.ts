// GET /v1/me throughput through the node:http adapter, beside a bare node:http + better-sqlite3 baseline
// doing the same token-hash lookup on the same database, in the same run. Usage: npm run bench:http [-- seconds]
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServerKit } from "../examples/node-http/server-kit.ts";
import { silentLogger } from "../src/index.ts";
import { alternate, measureServer, report, startServerProcess, stopServerProcess } from "./support.ts";

const seconds = Number(process.argv[2] ?? 10);
const connections = 32;
const dataDir = mkdtempSync(join(tmpdir(), "reachkit-bench-http-"));
const secret = "bench-secret-bench-secret-bench-secret-0";

const setup = createServerKit({ dataDir, publicUrl: "http://localhost", secret, logger: silentLogger() });
await setup.start({ runJobs: false });
const { output } = await setup.provisionCompany({ name: "Bench Co" });
await setup.stop();
const headers = { authorization: `Bearer ${output.apiKey as string}` };
const env = { BENCH_DATA_DIR: dataDir, BENCH_SECRET: secret };

const servers = { bare: join(import.meta.dirname, "servers/bare-me.ts"), reachkit: join(import.meta.dirname, "servers/reachkit-me.ts") };
const result = await alternate(servers, async (script) => {
  const server = await startServerProcess(script, env);
  const measured = await measureServer(server, { path: "/v1/me", headers, seconds, connections });
  await stopServerProcess(server.child);
  return measured;
});
report("http", { request: "GET /v1/me", seconds, connections, ...result, target: 0.8 });
