// The self-hosted kit on SQLite serving the OAuth consent page (a signed-in GET of the install URL).
import { nodeHttpServer } from "../../adapters/http/node/index.ts";
import { createServerKit } from "../../server/server-kit.ts";
import { jsonLogger } from "../../src/index.ts";

const kit = createServerKit({
  dataDir: process.env.BENCH_DATA_DIR!,
  publicUrl: "http://localhost",
  secret: process.env.BENCH_SECRET!,
  logger: jsonLogger({ level: "warn" }),
});
await kit.start();
const server = nodeHttpServer(kit);
const { port } = await server.listen(0, "127.0.0.1");
console.log(`PORT ${port}`);
process.once("SIGTERM", () => void server.close().then(() => process.exit(0)));
