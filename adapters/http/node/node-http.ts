import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { NeutralResponse } from "../../../src/http/neutral.ts";
import type { HostGroup } from "../../../src/http/route.ts";
import type { Reachkit } from "../../../src/kernel/reachkit.ts";

export interface NodeHandlerOptions {
  /** Serve reachkit under this path prefix (`/reachkit`); requests outside it fall through. */
  prefix?: string;
  /** Serve only these host groups, e.g. one listener per group. */
  groups?: readonly HostGroup[];
}

export type NodeHandler = (request: IncomingMessage, response: ServerResponse, next?: () => void) => void;

/**
 * A `(req, res, next?)` handler for raw node:http (or any connect-style host).
 * Requests outside the prefix call `next` when given, else answer the JSON 404.
 */
export function nodeHandler(kit: Reachkit, options: NodeHandlerOptions = {}): NodeHandler {
  const prefix = (options.prefix ?? "").replace(/\/+$/, "");
  const groups = options.groups;
  return (request, response, next) => {
    let url = request.url ?? "/";
    if (prefix) {
      const inside = url === prefix || url.startsWith(`${prefix}/`) || url.startsWith(`${prefix}?`);
      if (!inside) {
        if (next) return next();
        request.resume();
        return send(response, kit.http.notFound({ method: request.method ?? "GET", url, headers: request.headers }));
      }
      url = url.slice(prefix.length) || "/";
    }
    const hasBody = request.headers["transfer-encoding"] !== undefined || Number(request.headers["content-length"] ?? 0) > 0;
    kit.http
      .handle(
        {
          method: request.method ?? "GET",
          url,
          headers: request.headers,
          body: hasBody ? { kind: "stream", stream: request } : undefined,
          remoteAddress: request.socket.remoteAddress,
        },
        { groups },
      )
      .then((result) => send(response, result))
      .catch((error: unknown) => {
        kit.logger.error("node adapter failed to answer", { error });
        if (!response.headersSent) response.writeHead(500, { "content-type": "application/json" });
        response.end('{"error":{"code":"internal_error","message":"internal error"}}');
      });
  };
}

function send(response: ServerResponse, result: NeutralResponse): void {
  response.writeHead(result.status, result.headers);
  response.end(result.body);
}

export interface NodeHttpServer {
  readonly server: Server;
  /** Listens (port 0 picks a free port) and resolves with the bound address. */
  listen(port: number, host?: string): Promise<AddressInfo>;
  /** Stops accepting connections, waits for requests under way, then stops the kit. */
  close(): Promise<void>;
}

/** A node:http server serving one kit. */
export function nodeHttpServer(kit: Reachkit, options: NodeHandlerOptions = {}): NodeHttpServer {
  const handler = nodeHandler(kit, options);
  const server = createServer({ keepAliveTimeout: 5_000 }, (request, response) => handler(request, response));
  return {
    server,
    listen(port, host) {
      return new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          resolve(server.address() as AddressInfo);
        });
      });
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await kit.stop();
      server.closeAllConnections();
      await closed;
    },
  };
}
