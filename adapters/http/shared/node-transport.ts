import type { IncomingMessage, ServerResponse } from "node:http";
import type { NeutralRequest, NeutralResponse, Reachkit, RequestBody } from "../../../src/index.ts";

/** A node:http request, perhaps with a body a connect-style host (Express's `express.json()`...) parsed already. */
export type HostRequest = IncomingMessage & { body?: unknown };

/**
 * The body as the core takes it: what the host parsed (reused, never read
 * again), else the stream itself when the request has a body.
 */
export function requestBody(request: HostRequest): RequestBody | undefined {
  const parsed = request.body;
  if (parsed !== undefined) {
    if (Buffer.isBuffer(parsed)) return { kind: "buffer", buffer: parsed };
    if (typeof parsed === "string") return { kind: "buffer", buffer: Buffer.from(parsed) };
    return { kind: "parsed", value: parsed };
  }
  const headers = request.headers;
  const hasBody = headers["transfer-encoding"] !== undefined || Number(headers["content-length"] ?? 0) > 0;
  return hasBody ? { kind: "stream", stream: request } : undefined;
}

/** A node:http request as the core's neutral request; `url` is relative to the mount prefix. */
export function neutralFromNode(request: HostRequest, url: string, remoteAddress = request.socket.remoteAddress): NeutralRequest {
  return { method: request.method ?? "GET", url, headers: request.headers, body: requestBody(request), remoteAddress };
}

/**
 * Writes the core's answer; with its length given (0 for an empty answer but a
 * 204 or 304, which have none), so that Node sends it in one piece rather than chunked.
 */
export function sendNode(response: ServerResponse, result: NeutralResponse): void {
  const body = result.body;
  if (body !== undefined) result.headers["content-length"] = String(typeof body === "string" ? Buffer.byteLength(body) : body.length);
  else if (result.status !== 204 && result.status !== 304) result.headers["content-length"] = "0";
  response.writeHead(result.status, result.headers);
  response.end(body);
}

/** The last resort when the core itself failed (a bug): log it and answer a bare JSON 500. */
export function sendInternalError(kit: Reachkit, response: ServerResponse, error: unknown): void {
  kit.logger.error("HTTP adapter failed to answer", { error });
  if (!response.headersSent) response.writeHead(500, { "content-type": "application/json" });
  response.end('{"error":{"code":"internal_error","message":"internal error"}}');
}
