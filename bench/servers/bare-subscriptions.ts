// The baseline of bench/subscriptions.ts: bare node:http serving the work of bare-subscription-handlers.ts
// (better-sqlite3, the same reads and writes as reachkit) on the bench database.
import "./cpu-probe.ts";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { BareAnswer } from "./bare-handlers.ts";
import { bareSubscriptions } from "./bare-subscription-handlers.ts";

const db = new Database(join(process.env.BENCH_DATA_DIR!, "reachkit.db"));
db.pragma("journal_mode = WAL");
db.pragma("synchronous = NORMAL");
db.pragma("busy_timeout = 5000");
const bare = bareSubscriptions(db);

function send(response: ServerResponse, { status, json }: BareAnswer): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(json));
}

function readJson(request: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch (error) {
        reject(error);
      }
    });
  });
}

const server = createServer((request, response) => {
  const [path, query] = request.url!.split("?", 2);
  const { authorization } = request.headers;
  const posted = (handle: (body: unknown) => BareAnswer) =>
    void readJson(request).then(
      (body) => send(response, handle(body)),
      (error: unknown) => send(response, { status: 400, json: { error: String(error) } }),
    );
  if (request.method === "GET" && path === "/v1/subscriptions") return send(response, bare.eligibility(authorization, new URLSearchParams(query)));
  if (request.method === "POST" && path === "/v1/subscriptions") return posted((body) => bare.optIn(authorization, body));
  if (request.method === "POST" && path === "/v1/graphql") return posted((body) => bare.graphql(authorization, body));
  send(response, { status: 404, json: { error: "not found" } });
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  console.log(`PORT ${typeof address === "object" && address ? address.port : 0}`);
});
process.once("SIGTERM", () => server.close(() => process.exit(0)));
