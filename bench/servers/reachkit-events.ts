// The self-hosted server of bench/events.ts: SQLite in BENCH_DATA_DIR, or PostgreSQL at BENCH_DATABASE_URL,
// served by the node:http adapter, request logs off and rate limits lifted; the job runner is off.
import "./cpu-probe.ts";
import { nodeHttpServer } from "../../adapters/http/node/index.ts";
import { createServerKit } from "../../server/server-kit.ts";
import { jsonLogger } from "../../src/index.ts";

const kit = createServerKit({
  dataDir: process.env.BENCH_DATA_DIR!,
  databaseUrl: process.env.BENCH_DATABASE_URL || undefined,
  publicUrl: "http://localhost",
  secret: process.env.BENCH_SECRET!,
  logger: jsonLogger({ level: "warn" }),
  config: { rateLimits: { default: Infinity } },
});
await kit.start({ runJobs: false });
const server = nodeHttpServer(kit);
const { port } = await server.listen(0, "127.0.0.1");
console.log(`PORT ${port}`);
process.once("SIGTERM", () => void server.close().then(() => process.exit(0)));
