import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Logger } from "../../../src/ports/logger.ts";

/**
 * Connection limits of a node:http server: they cut off clients that send
 * huge header blocks or send slowly (slowloris), and clients that open many
 * connections, before any reachkit code runs.
 */
export interface ServerLimits {
  /** Largest request header block, in bytes; a larger one answers 431 and the connection closes. Default 16 KiB. */
  maxHeaderSize: number;
  /** Header lines read per request; node drops the lines after these (their total size stays capped by `maxHeaderSize`). Default 100. */
  maxHeadersCount: number;
  /** Time for the complete request headers to arrive; then 408 and the connection closes. Default 10 s. */
  headersTimeoutMs: number;
  /**
   * Time for the whole request, body included, to arrive; then 408 and the
   * connection closes. Default 300 s: a large catalog file over a slow link
   * needs it (raise it for multi-gigabyte catalogs).
   */
  requestTimeoutMs: number;
  /**
   * Longest gap in a request body: once the headers are in, a body that gets
   * no byte for this long answers 408 and the connection closes. Time the
   * server itself is behind reading the body does not count. Default 30 s.
   */
  bodyIdleTimeoutMs: number;
  /** How long an idle keep-alive connection stays open. Default 5 s. */
  keepAliveTimeoutMs: number;
  /**
   * Open connections from one client address; the server closes one more at
   * once, before reading a byte. Default 256. Behind a reverse proxy every
   * client shares the proxy's address: raise it above the proxy's connections
   * to the server and cap each client at the proxy.
   */
  maxConnectionsPerAddress: number;
}

export const DEFAULT_SERVER_LIMITS: Readonly<ServerLimits> = Object.freeze({
  maxHeaderSize: 16 * 1024,
  maxHeadersCount: 100,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 300_000,
  bodyIdleTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnectionsPerAddress: 256,
});

/** Connections refused over the per-address cap are logged at most this often. */
const REFUSAL_WARNING_INTERVAL_MS = 60_000;

/** The limits with defaults filled in; throws naming the first that is not a positive whole number or does not fit. */
export function resolveServerLimits(input: Partial<ServerLimits> = {}): ServerLimits {
  const limits = { ...DEFAULT_SERVER_LIMITS, ...input };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`server limit ${name} must be a positive whole number, got ${value}`);
  }
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) throw new RangeError("server limit headersTimeoutMs must not exceed requestTimeoutMs");
  return limits;
}

/**
 * A node:http server with the limits applied (and checked often enough that a
 * 1 s timeout fires within about 1 s). With a logger, refusals over the
 * per-address cap are logged (warn, at most once a minute).
 */
export function createLimitedServer(input: Partial<ServerLimits>, listener: RequestListener, logger?: Logger): Server {
  const limits = resolveServerLimits(input);
  const stalledBodies = new StalledBodies(limits.bodyIdleTimeoutMs);
  const server = createServer(
    {
      maxHeaderSize: limits.maxHeaderSize,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      // Node checks the two timeouts on this interval (30 s by default), which would let them run late by as much.
      connectionsCheckingInterval: checkingInterval(limits.headersTimeoutMs),
    },
    (request, response) => {
      stalledBodies.watch(request, response);
      listener(request, response);
    },
  );
  server.maxHeadersCount = limits.maxHeadersCount;
  capConnectionsPerAddress(server, limits.maxConnectionsPerAddress, logger);
  let sweeper: NodeJS.Timeout | undefined;
  server.on("listening", () => {
    clearInterval(sweeper);
    sweeper = setInterval(() => stalledBodies.sweep(), checkingInterval(limits.bodyIdleTimeoutMs)).unref();
  });
  server.on("close", () => clearInterval(sweeper));
  return server;
}

const checkingInterval = (timeoutMs: number) => Math.max(50, Math.min(1_000, Math.floor(timeoutMs / 4)));

function capConnectionsPerAddress(server: Server, cap: number, logger: Logger | undefined): void {
  const open = new Map<string, number>();
  let warnedAt = -Infinity;
  let refusedUnlogged = 0;
  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress ?? "";
    const count = open.get(address) ?? 0;
    if (count >= cap) {
      socket.destroy();
      refusedUnlogged++;
      const now = performance.now();
      if (logger && now - warnedAt >= REFUSAL_WARNING_INTERVAL_MS) {
        logger.warn("connection refused: too many open connections from one address", { address, maxConnectionsPerAddress: cap, refused: refusedUnlogged });
        warnedAt = now;
        refusedUnlogged = 0;
      }
      return;
    }
    open.set(address, count + 1);
    socket.once("close", () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
  });
}

interface BodyInFlight {
  request: IncomingMessage;
  response: ServerResponse;
  bytesRead: number;
  progressAt: number;
}

/**
 * Request bodies still arriving, and the time each last made progress. Node
 * has no such timeout: its request timeout bounds the whole request, so
 * without this a body that stops after its headers holds the connection for
 * all of it (300 s by default).
 */
class StalledBodies {
  readonly #inFlight = new Set<BodyInFlight>();

  constructor(private readonly idleMs: number) {}

  watch(request: IncomingMessage, response: ServerResponse): void {
    const declaresBody = request.headers["transfer-encoding"] !== undefined || Number(request.headers["content-length"] ?? 0) > 0;
    if (!declaresBody || request.complete) return;
    this.#inFlight.add({ request, response, bytesRead: request.socket.bytesRead, progressAt: performance.now() });
  }

  sweep(): void {
    const now = performance.now();
    for (const body of this.#inFlight) {
      const { request } = body;
      const socket = request.socket;
      if (request.complete || socket.destroyed) {
        this.#inFlight.delete(body);
      } else if (socket.bytesRead !== body.bytesRead || request.readableLength > 0) {
        // Bytes came in, or the server has unread bytes of the body (it paused the socket): not the client's delay.
        body.bytesRead = socket.bytesRead;
        body.progressAt = now;
      } else if (now - body.progressAt >= this.idleMs) {
        this.#inFlight.delete(body);
        cutOff(socket, body.response, this.idleMs);
      }
    }
  }
}

/** Answers 408 (unless an answer has begun) and closes, as node does when its own request timeout fires. */
function cutOff(socket: Socket, response: ServerResponse, idleMs: number): void {
  if (!response.headersSent && socket.writable) {
    const body = JSON.stringify({ error: { code: "request_timeout", message: `the request body stalled: no byte came for ${idleMs} ms` } });
    socket.write(
      `HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
