import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import type { HttpCore } from "./http-core.ts";
import type { NeutralRequest, NeutralResponse } from "./neutral.ts";

/** What a fetch-style host knows about a request beyond the `Request` itself. */
export interface FetchRequestInfo {
  /** The client's address, when the host exposes it (Bun's `server.requestIP`, Deno's `info.remoteAddr`). */
  remoteAddress?: string;
}

/** The path and query string of a fetch `Request`'s absolute URL, still percent-encoded. */
export function pathAndQuery(request: Request): string {
  const url = new URL(request.url);
  return `${url.pathname}${url.search}`;
}

/** A fetch `Request` as the core's neutral request; `url` is its path and query relative to the mount prefix. */
export function neutralFromFetch(request: Request, url: string, info: FetchRequestInfo = {}): NeutralRequest {
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => (headers[name] = value));
  return {
    method: request.method,
    url,
    headers,
    body: request.body ? { kind: "stream", stream: Readable.fromWeb(request.body as NodeReadableStream<Uint8Array>) } : undefined,
    remoteAddress: info.remoteAddress,
  };
}

/** The core's answer as a fetch `Response` (no body in answer to HEAD). */
export function fetchResponse(response: NeutralResponse, method: string): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  const body = method.toUpperCase() === "HEAD" ? undefined : response.body;
  return new Response(body ?? null, { status: response.status, headers });
}

/** `kit.fetch`: serves a fetch `Request` at the root, every route answering or the JSON 404. */
export async function handleFetch(core: HttpCore, request: Request, info: FetchRequestInfo = {}): Promise<Response> {
  const response = await core.handle(neutralFromFetch(request, pathAndQuery(request), info));
  return fetchResponse(response, request.method);
}
