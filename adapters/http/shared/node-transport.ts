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

/** The most of a body no route read that an answer waits for (read and dropped); past it, the answer goes at once. */
const UNREAD_BODY_WAIT_BYTES = 1024 * 1024;

/**
 * Settles once the rest of a body the core did not read has arrived (read and dropped), at once when there is
 * none or more than UNREAD_BODY_WAIT_BYTES is left. An answer written while the client is still sending is
 * lost when the connection then closes: the unread bytes turn the close into a reset, and a reset discards
 * what the client has not read yet (a GET of /openapi.json with a large body lost its answer that way).
 */
export function unreadBodyArrived(request: IncomingMessage): Promise<void> {
  if (request.complete || request.readableEnded || request.destroyed) return Promise.resolve();
  const declared = Number(request.headers["content-length"]);
  if (declared > UNREAD_BODY_WAIT_BYTES) return Promise.resolve();
  return new Promise((resolve) => {
    let read = 0;
    const arrived = () => {
      request.off("data", count);
      resolve();
    };
    const count = (chunk: Buffer) => {
      read += chunk.length;
      if (read > UNREAD_BODY_WAIT_BYTES) arrived();
    };
    request.on("data", count);
    request.once("end", arrived).once("close", arrived).once("error", arrived);
  });
}

/**
 * Writes the core's answer once the request's unread body has arrived (unreadBodyArrived); at once when the
 * core closes the connection itself (a body over the limit: 413), since that body is not to be waited for.
 */
export async function answerNode(request: IncomingMessage, response: ServerResponse, result: NeutralResponse): Promise<void> {
  if (result.headers.connection !== "close") await unreadBodyArrived(request);
  sendNode(response, result);
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
