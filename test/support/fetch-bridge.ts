import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";

/** A fetch-style handler, as Bun.serve, Deno.serve or a Worker would call it. */
export type FetchStyleHandler = (request: Request) => Promise<Response>;

/**
 * A node:http server calling a fetch-style handler, standing in for a fetch
 * host so that the fetch adapter is tested over a real socket.
 */
export function fetchBridgeServer(handler: FetchStyleHandler): Server {
  return createServer((incoming, outgoing) => {
    handler(toRequest(incoming))
      .then((response) => writeResponse(response, outgoing))
      .catch(() => outgoing.destroy());
  });
}

function toRequest(incoming: IncomingMessage): Request {
  const headers = new Headers();
  for (let i = 0; i < incoming.rawHeaders.length; i += 2) headers.append(incoming.rawHeaders[i]!, incoming.rawHeaders[i + 1]!);
  const bodyless = incoming.method === "GET" || incoming.method === "HEAD";
  return new Request(`http://${incoming.headers.host ?? "localhost"}${incoming.url}`, {
    method: incoming.method,
    headers,
    body: bodyless ? undefined : (Readable.toWeb(incoming) as ReadableStream<Uint8Array>),
    duplex: "half",
  } as RequestInit);
}

function writeResponse(response: Response, outgoing: ServerResponse): void {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  outgoing.writeHead(response.status, headers);
  if (!response.body) return void outgoing.end();
  Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>).pipe(outgoing);
}
