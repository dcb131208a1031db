// The self-hosted kit (SQLite, files or an S3 bucket for objects, catalog plugin) behind node:http, request logs off.
// Once listening it prints its peak RSS so far ("IDLE {...}": start-up, before any upload); on SIGTERM its
// peak RSS ("STATS {...}"): the benchmark's memory figure for the processing process.
import "./cpu-probe.ts";
import { nodeHttpServer } from "../../adapters/http/node/index.ts";
import { deliveryFromEnv } from "../../server/delivery-config.ts";
import { createServerKit } from "../../server/server-kit.ts";
import { jsonLogger } from "../../src/index.ts";

const kit = createServerKit({
  dataDir: process.env.BENCH_DATA_DIR!,
  publicUrl: process.env.BENCH_PUBLIC_URL!,
  secret: process.env.BENCH_SECRET!,
  logger: jsonLogger({ level: "warn" }),
  config: { rateLimits: { default: Infinity, "catalog-upload": Infinity } },
  // Objects in the data directory, or in the bucket the S3 variables name (npm run bench:catalog -- s3).
  delivery: deliveryFromEnv(process.env),
});
await kit.start();
const server = nodeHttpServer(kit);
const { port } = await server.listen(Number(process.env.BENCH_PORT ?? 0), "127.0.0.1");
console.log(`IDLE ${JSON.stringify({ maxRssBytes: process.resourceUsage().maxRSS * 1024 })}`);
console.log(`PORT ${port}`);
process.once("SIGTERM", () => {
  console.log(`STATS ${JSON.stringify({ maxRssBytes: process.resourceUsage().maxRSS * 1024 })}`);
  void server.close().then(() => process.exit(0));
});
