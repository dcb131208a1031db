import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fakeClock } from "../../adapters/clock/index.ts";
import { manualScheduler } from "../../adapters/scheduler/manual/index.ts";
import { memoryStorage } from "../../adapters/storage/memory/index.ts";
import { accountsPlugin } from "../../plugins/accounts/index.ts";
import { createReachkit, silentLogger, type Reachkit } from "../../src/index.ts";
import type { HttpAdapterHarness, MountedHost } from "../../src/testkit/index.ts";
import { TEST_SECRET } from "./test-kit.ts";

/** The kits of the HTTP conformance suite: memory adapters, a fake clock, the accounts plugin. */
export const makeConformanceKit: HttpAdapterHarness["makeKit"] = ({ plugins, config }): Reachkit => {
  const clock = fakeClock("2026-03-01T12:00:00.000Z");
  return createReachkit({
    storage: memoryStorage(),
    scheduler: manualScheduler(clock),
    clock,
    logger: silentLogger(),
    secret: TEST_SECRET,
    plugins: [accountsPlugin(), ...plugins],
    config,
  });
};

/** Listens on a free port of 127.0.0.1 and returns the host's base URL and its closing. */
export async function listening(server: Server): Promise<MountedHost> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

export async function readText(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function sendJson(response: ServerResponse, status: number, value: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(value));
}

/** The host's own routes of the conformance suite, on raw node:http; anything else is 404. */
export async function nodeHostRoutes(request: IncomingMessage & { body?: unknown }, response: ServerResponse): Promise<void> {
  if (request.method === "GET" && request.url === "/host/hello") return sendJson(response, 200, { host: "hello" });
  if (request.method === "POST" && request.url === "/host/echo") return sendJson(response, 200, { host: request.body ?? JSON.parse(await readText(request)) });
  request.resume();
  sendJson(response, 404, { host: "not found" });
}

/** A connect-style body parser, as a host might install in front of everything: JSON and forms into `req.body`. */
export async function parseHostBody(request: IncomingMessage & { body?: unknown }): Promise<void> {
  const type = request.headers["content-type"]?.split(";", 1)[0];
  if (type === "application/json") request.body = JSON.parse((await readText(request)) || "null");
  if (type === "application/x-www-form-urlencoded") request.body = Object.fromEntries(new URLSearchParams(await readText(request)));
}
