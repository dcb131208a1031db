import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { nodeHandler } from "../../adapters/http/node/index.ts";
import type { Reachkit } from "../../src/index.ts";

/** A node:http server on a free loopback port, whose kit is attached once it exists. */
export interface LoopbackServer {
  /** `http://127.0.0.1:<port>`: the kit's public URL, known before the kit is made. */
  url: string;
  /** Sends every request from now on to `kit`. */
  serve(kit: Reachkit): void;
  /** Closes the server and its open connections. */
  close(): Promise<void>;
}

/** Listens first: a kit's public URL (its callback and upload URLs, its install pages) must name the port. */
export async function loopbackServer(): Promise<LoopbackServer> {
  let handler: ReturnType<typeof nodeHandler> | undefined;
  const server = createServer((request, response) => {
    if (handler) return handler(request, response);
    response.writeHead(503).end();
  });
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    serve(kit) {
      handler = nodeHandler(kit);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
