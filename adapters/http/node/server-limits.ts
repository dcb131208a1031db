import { createServer, type RequestListener, type Server } from "node:http";

/**
 * Connection limits of a node:http server: they cut off clients that send
 * huge header blocks or send slowly (slowloris), before any reachkit code runs.
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
  /** How long an idle keep-alive connection stays open. Default 5 s. */
  keepAliveTimeoutMs: number;
}

export const DEFAULT_SERVER_LIMITS: Readonly<ServerLimits> = Object.freeze({
  maxHeaderSize: 16 * 1024,
  maxHeadersCount: 100,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 300_000,
  keepAliveTimeoutMs: 5_000,
});

/** The limits with defaults filled in; throws naming the first that is not a positive whole number or does not fit. */
export function resolveServerLimits(input: Partial<ServerLimits> = {}): ServerLimits {
  const limits = { ...DEFAULT_SERVER_LIMITS, ...input };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`server limit ${name} must be a positive whole number, got ${value}`);
  }
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) throw new RangeError("server limit headersTimeoutMs must not exceed requestTimeoutMs");
  return limits;
}

/** A node:http server with the limits applied (and checked often enough that a 1 s timeout fires within about 1 s). */
export function createLimitedServer(input: Partial<ServerLimits>, listener: RequestListener): Server {
  const limits = resolveServerLimits(input);
  const server = createServer(
    {
      maxHeaderSize: limits.maxHeaderSize,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      // Node checks the two timeouts on this interval (30 s by default), which would let them run late by as much.
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 4))),
    },
    listener,
  );
  server.maxHeadersCount = limits.maxHeadersCount;
  return server;
}
