import type { IncomingMessage, ServerResponse } from "node:http";
import type { Reachkit } from "../src/index.ts";

/** The listen error of a port, in the operator's words (`npm start` prints it as one line). */
export function listenError(error: unknown, port: number): Error {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "EADDRINUSE") return new Error(`port ${port} is in use by another process; stop it, or set PORT to a free port`);
  if (code === "EACCES") return new Error(`port ${port} needs privileges this process does not have; set PORT to a port above 1023`);
  return error instanceof Error ? error : new Error(String(error));
}

const LANDING_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>reachkit</title>
</head>
<body>
<main>
<h1>reachkit is running</h1>
<p>This is a reachkit server: its API answers on this address.</p>
<ul>
<li><a href="console">Operator console</a>: subscribers, messages, catalog uploads, reminders and settings, for the company's dashboard users (<code>reachkit dashboard-users create</code> makes one)</li>
<li><a href="docs">API reference</a> (<a href="openapi.json">OpenAPI document</a>)</li>
<li><a href="integrations/oauth-install">Install page</a>: applications send people to it with their install link (<code>reachkit oauth-apps create</code> prints one)</li>
<li><a href="healthz">Health</a>, <a href="readyz">readiness</a> and <a href="metrics">metrics</a> for operators</li>
</ul>
</main>
</body>
</html>
`;

function send(response: ServerResponse, status: number, contentType: string, body: string, head: boolean): void {
  response.writeHead(status, { "content-type": contentType, "cache-control": "no-store", "x-content-type-options": "nosniff" });
  response.end(head ? undefined : body);
}

/** The starting server's answer to a request its kit will serve. */
export function answerStarting(response: ServerResponse): void {
  response.writeHead(503, { "content-type": "application/json", "retry-after": "1" });
  response.end('{"error":{"code":"starting","message":"the server is starting; try again in a moment"}}');
}

type OperationsRoute = (response: ServerResponse, kit: Reachkit | undefined, head: boolean) => Promise<void>;

const OPERATIONS_ROUTES: Readonly<Record<string, OperationsRoute>> = {
  "/": async (response, _kit, head) => send(response, 200, "text/html; charset=utf-8", LANDING_PAGE, head),
  "/healthz": async (response, _kit, head) => send(response, 200, "application/json", '{"status":"ok"}', head),
  async "/readyz"(response, kit, head) {
    const status = await readiness(kit);
    send(response, status === "ready" ? 200 : 503, "application/json", JSON.stringify({ status }), head);
  },
  async "/metrics"(response, kit, head) {
    if (!kit) return answerStarting(response);
    send(response, 200, kit.metrics.contentType, await kit.metrics.text(), head);
  },
};

/**
 * The self-hosted server's own routes, beside the kit's: the landing page,
 * `/healthz` (the process answers), `/readyz` (the kit serves: started, and its
 * database answers) and `/metrics`. Undefined for any other request, found
 * without an await: every request of the kit's passes here first.
 */
export function operationsRoute(request: IncomingMessage): ((response: ServerResponse, kit: Reachkit | undefined) => Promise<void>) | undefined {
  if (request.method !== "GET" && request.method !== "HEAD") return undefined;
  const url = request.url ?? "/";
  const query = url.indexOf("?");
  const path = query === -1 ? url : url.slice(0, query);
  if (!Object.hasOwn(OPERATIONS_ROUTES, path)) return undefined;
  return (response, kit) => OPERATIONS_ROUTES[path]!(response, kit, request.method === "HEAD");
}

async function readiness(kit: Reachkit | undefined): Promise<string> {
  if (kit?.status !== "started") return kit?.status ?? "starting";
  try {
    // A primary-key read: the database answers (a PostgreSQL server may be gone while the process lives).
    await kit.jobs.get("readiness-probe");
    return "ready";
  } catch {
    return "storage unavailable";
  }
}
