import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { HostGroup, Reachkit } from "../../../src/index.ts";
import { insidePrefix, normalizePrefix, pathOf } from "../shared/mount.ts";
import { answerNode, neutralFromNode, sendInternalError, sendNode, type HostRequest } from "../shared/node-transport.ts";
import { createLimitedServer, type ServerLimits } from "./server-limits.ts";

export interface NodeHandlerOptions {
  /** Serve reachkit under this path prefix (`/reachkit`); requests outside it fall through. */
  prefix?: string;
  /** Serve only these host groups, e.g. one listener per group. */
  groups?: readonly HostGroup[];
}

export type NodeHandler = (request: IncomingMessage, response: ServerResponse, next?: () => void) => void;

/**
 * A `(req, res, next?)` handler for raw node:http (or any connect-style host).
 * With `next`, a request no route serves (outside the prefix, or an unknown
 * path) goes on to the host; without it, it answers the JSON 404. A body the
 * host parsed already (`req.body`) is reused, never read again.
 */
export function nodeHandler(kit: Reachkit, options: NodeHandlerOptions = {}): NodeHandler {
  const prefix = normalizePrefix(options.prefix);
  const groups = options.groups;
  return (request: HostRequest, response, next) => {
    const method = request.method ?? "GET";
    const url = insidePrefix(request.url ?? "/", prefix);
    if (url === undefined) {
      if (next) return next();
      request.resume();
      return sendNode(response, kit.http.notFound({ method, url: request.url ?? "/", headers: request.headers }));
    }
    const lookup = kit.http.lookup(method, pathOf(url), { groups });
    if (lookup.kind === "not_found" && next) return next();
    kit.http
      .respond(lookup, neutralFromNode(request, url))
      .then((result) => answerNode(request, response, result))
      .catch((error: unknown) => sendInternalError(kit, response, error));
  };
}

export interface NodeHttpServer {
  readonly server: Server;
  /** Listens (port 0 picks a free port) and resolves with the bound address. */
  listen(port: number, host?: string): Promise<AddressInfo>;
  /** Stops accepting connections, waits for requests under way, then stops the kit. */
  close(): Promise<void>;
}

/** What `nodeHttpServer` serves (prefix, host groups) and the connection limits of its server. */
export interface NodeHttpServerOptions extends NodeHandlerOptions {
  /** Header size and count, header, request and keep-alive timeouts (see DEFAULT_SERVER_LIMITS). */
  limits?: Partial<ServerLimits>;
}

/** A node:http server serving one kit. */
export function nodeHttpServer(kit: Reachkit, options: NodeHttpServerOptions = {}): NodeHttpServer {
  const handler = nodeHandler(kit, options);
  const server = createLimitedServer(options.limits ?? {}, (request, response) => handler(request, response));
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
