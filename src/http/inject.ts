import type { HttpCore } from "./http-core.ts";
import type { NeutralResponse } from "./neutral.ts";

export interface InjectRequest {
  /** Default GET. */
  method?: string;
  /** Path and query string. */
  url: string;
  headers?: Record<string, string | string[]>;
  /** A string or Buffer is sent as is; anything else as JSON (with its content type unless one is given). */
  body?: unknown;
  /** The client address the kit sees (rate limits by address); default 127.0.0.1. */
  remoteAddress?: string;
}

export interface InjectResponse {
  status: number;
  /** A header sent several times (`set-cookie`) reads as its values joined by ", ", as fetch's `Headers.get` does. */
  headers: Record<string, string>;
  body: string;
  /** The body parsed as JSON. */
  json<T = unknown>(): T;
}

/** Runs a request through the kit with no socket: the in-process test client. */
export async function inject(core: HttpCore, request: InjectRequest): Promise<InjectResponse> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(request.headers ?? {})) headers[name.toLowerCase()] = value;
  let buffer: Buffer | undefined;
  if (typeof request.body === "string") buffer = Buffer.from(request.body);
  else if (Buffer.isBuffer(request.body)) buffer = request.body;
  else if (request.body !== undefined) {
    buffer = Buffer.from(JSON.stringify(request.body));
    headers["content-type"] ??= "application/json";
  }
  if (buffer) headers["content-length"] ??= String(buffer.length);
  const response: NeutralResponse = await core.handle({
    method: request.method ?? "GET",
    url: request.url,
    headers,
    body: buffer ? { kind: "buffer", buffer } : undefined,
    remoteAddress: request.remoteAddress ?? "127.0.0.1",
  });
  // A transport never sends a body in answer to HEAD.
  const body = response.body === undefined || request.method?.toUpperCase() === "HEAD" ? "" : response.body.toString();
  const responseHeaders: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) responseHeaders[name] = Array.isArray(value) ? value.join(", ") : value;
  return {
    status: response.status,
    headers: responseHeaders,
    body,
    json: <T>() => JSON.parse(body) as T,
  };
}
