// The self-hosted kit on SQLite, served by the node:http adapter, with request logs off (LOG_LEVEL=warn).
import "./cpu-probe.ts";
import { nodeHttpServer } from "../../adapters/http/node/index.ts";
import { createServerKit } from "../../examples/node-http/server-kit.ts";
import { jsonLogger } from "../../src/index.ts";

const kit = createServerKit({
  dataDir: process.env.BENCH_DATA_DIR!,
  publicUrl: "http://localhost",
  secret: process.env.BENCH_SECRET!,
  logger: jsonLogger({ level: "warn" }),
  // Rate limits are lifted so the benchmark measures the request path, not 429s.
  config: { rateLimits: { default: Infinity } },
});
await kit.start();
const server = nodeHttpServer(kit);
const { port } = await server.listen(0, "127.0.0.1");
console.log(`PORT ${port}`);
process.once("SIGTERM", () => void server.close().then(() => process.exit(0)));
