// The self-hosted kit on SQLite served through the adapter of BENCH_FRAMEWORK (node, express or fastify),
// with request logs off (level warn) and rate limits lifted, so the benchmark measures the request path.
import "./cpu-probe.ts";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import Fastify from "fastify";
import { expressRouter } from "../../adapters/http/express/index.ts";
import { fastifyPlugin } from "../../adapters/http/fastify/index.ts";
import { nodeHttpServer } from "../../adapters/http/node/index.ts";
import { createServerKit } from "../../server/server-kit.ts";
import { jsonLogger } from "../../src/index.ts";

const kit = createServerKit({
  dataDir: process.env.BENCH_DATA_DIR!,
  publicUrl: "http://localhost",
  secret: process.env.BENCH_SECRET!,
  logger: jsonLogger({ level: "warn" }),
  config: { rateLimits: { default: Infinity } },
});
await kit.start();
const framework = process.env.BENCH_FRAMEWORK ?? "node";

async function listen(): Promise<{ port: number; close: () => Promise<void> }> {
  if (framework === "express") {
    const app = express();
    app.use(expressRouter(kit));
    const server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return { port: (server.address() as AddressInfo).port, close: () => new Promise<void>((resolve) => server.close(() => resolve())).then(() => kit.stop()) };
  }
  if (framework === "fastify") {
    const app = Fastify();
    await app.register(fastifyPlugin(kit));
    await app.listen({ port: 0, host: "127.0.0.1" });
    return { port: (app.server.address() as AddressInfo).port, close: () => app.close().then(() => kit.stop()) };
  }
  const server = nodeHttpServer(kit);
  return { port: (await server.listen(0, "127.0.0.1")).port, close: () => server.close() };
}

const { port, close } = await listen();
console.log(`PORT ${port}`);
process.once("SIGTERM", () => void close().then(() => process.exit(0)));
