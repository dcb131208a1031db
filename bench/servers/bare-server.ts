// The baseline server: the bare handlers as plain routes of BENCH_FRAMEWORK (node, express or fastify), no reachkit.
import "./cpu-probe.ts";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import Fastify from "fastify";
import { bareHandlers } from "./bare-handlers.ts";

const handlers = bareHandlers(process.env.BENCH_DATA_DIR!);
const framework = process.env.BENCH_FRAMEWORK ?? "node";

async function listen(): Promise<{ port: number; close: () => Promise<void> }> {
  if (framework === "express") {
    const app = express();
    // No ETag: reachkit's answers carry none, so the baseline must not pay for one either.
    app.set("etag", false);
    for (const [path, handler] of Object.entries(handlers)) {
      app.get(path, (request, response) => {
        const answer = handler(request.headers.authorization, new URLSearchParams(request.url.split("?")[1]));
        response.status(answer.status).json(answer.json);
      });
    }
    return listenNode(createServer(app));
  }
  if (framework === "fastify") {
    const app = Fastify();
    for (const [path, handler] of Object.entries(handlers)) {
      app.get(path, async (request, reply) => {
        const answer = handler(request.headers.authorization, new URLSearchParams(request.url.split("?")[1]));
        return reply.code(answer.status).send(answer.json);
      });
    }
    await app.listen({ port: 0, host: "127.0.0.1" });
    return { port: (app.server.address() as AddressInfo).port, close: () => app.close() };
  }
  return listenNode(
    createServer((request, response) => {
      const [path, query] = (request.url ?? "/").split("?");
      const handler = handlers[path!];
      const answer = handler ? handler(request.headers.authorization, new URLSearchParams(query)) : { status: 404, json: { error: "not found" } };
      const body = JSON.stringify(answer.json);
      response.writeHead(answer.status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      response.end(body);
    }),
  );
}

async function listenNode(server: ReturnType<typeof createServer>) {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const { port, close } = await listen();
console.log(`PORT ${port}`);
process.once("SIGTERM", () => void close().then(() => process.exit(0)));
