// The self-hosted kit on SQLite, served by the node:http adapter, request logs off and rate limits lifted.
// The job runner is off unless BENCH_RUN_JOBS=1: the benchmark measures what a request does, like its baseline.
import "./cpu-probe.ts";
import { nodeHttpServer } from "../../adapters/http/node/index.ts";
import { createServerKit } from "../../server/server-kit.ts";
import { jsonLogger } from "../../src/index.ts";

const kit = createServerKit({
  dataDir: process.env.BENCH_DATA_DIR!,
  publicUrl: "http://localhost",
  secret: process.env.BENCH_SECRET!,
  logger: jsonLogger({ level: "warn" }),
  config: { rateLimits: { default: Infinity, "opt-in": Infinity, unsubscribe: Infinity } },
});
await kit.start({ runJobs: process.env.BENCH_RUN_JOBS === "1" });
const server = nodeHttpServer(kit);
const { port } = await server.listen(0, "127.0.0.1");
console.log(`PORT ${port}`);
process.once("SIGTERM", () => void server.close().then(() => process.exit(0)));
