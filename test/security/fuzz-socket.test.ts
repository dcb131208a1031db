import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { configFromEnv } from "../../server/config.ts";
import { startServer, type RunningServer } from "../../server/server.ts";
import type { InjectRequest } from "../../src/index.ts";
import { TEST_SECRET } from "../support/test-kit.ts";
import { answerProblem } from "./support/answer-shape.ts";
import { requestArb } from "./support/fuzz-requests.ts";
import { ANSWER_DEADLINE_MS, fuzzOptions } from "./support/fuzz-routes.ts";
import { seedFuzzWorld, type FuzzWorld } from "./support/fuzz-world.ts";
import { ROUTE_EXAMPLES, routeKey } from "./support/route-examples.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";

/** Requests per route over the socket (the in-process shards send the bulk); raw byte streams in all. */
const SOCKET_RUNS = Number(process.env.REACHKIT_FUZZ_SOCKET_RUNS ?? 20);
const RAW_RUNS = Number(process.env.REACHKIT_FUZZ_RAW_RUNS ?? 300);
/** The server's, short so that a request whose headers never end is answered within the test's deadline. */
const HEADERS_TIMEOUT_MS = 1000;

interface SocketAnswer {
  status: number;
  /** From the request's start to the answer's end. */
  elapsedMs: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends one request with node:http; undefined when the client library refuses the request itself (a header value it cannot send). */
function send(url: string, request: InjectRequest): Promise<SocketAnswer | undefined> {
  const headers = { ...(request.headers as Record<string, string>) };
  // Framed right (node's client sends a GET's body unframed); framing attacks are the raw-bytes test's job.
  delete headers["transfer-encoding"];
  if (request.body === undefined) delete headers["content-length"];
  else headers["content-length"] = String(Buffer.byteLength(request.body as string | Buffer));
  const started = performance.now();
  return new Promise((resolve, reject) => {
    let client;
    try {
      client = httpRequest(`${url}${request.url}`, { method: request.method, headers, agent: false });
    } catch {
      return resolve(undefined);
    }
    client.setTimeout(ANSWER_DEADLINE_MS, () => client.destroy(new Error(`no answer within ${ANSWER_DEADLINE_MS} ms`)));
    client.on("error", reject);
    client.on("response", (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk));
      // A connection closed in the middle of the body ends no answer: without this the test waits for ever.
      response.on("error", (error) => reject(new Error(`the answer (${response.statusCode}) to ${request.method} ${request.url} broke off: ${error.message}`)));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, elapsedMs: performance.now() - started, headers: response.headers as Record<string, string>, body }));
    });
    client.end(request.body as string | Buffer | undefined);
  });
}

/** Writes raw bytes, half-closes, and reads whatever comes back until the server closes. */
function sendRaw(port: number, bytes: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the connection stayed open ${ANSWER_DEADLINE_MS} ms after ${JSON.stringify(bytes.toString("latin1").slice(0, 300))}`));
    }, ANSWER_DEADLINE_MS);
    socket.on("data", (chunk) => (received += chunk.toString("latin1")));
    socket.on("error", () => undefined); // a reset after the server's answer is an answer too
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(received);
    });
    socket.end(bytes);
  });
}

const rawRequest = (world: FuzzWorld) => {
  const routes = world.kit.http.routes;
  const target = fc.oneof(
    fc.constantFrom(...routes.map((route) => route.path.replace(/:(\w+)/g, "x"))),
    fc.constantFrom("*", "http://evil.example/v1/me", "/v1/me?" + "a".repeat(20_000), "//", "/%", "/../../etc/passwd", "/v1/me#frag", ""),
  );
  const method = fc.constantFrom("GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "CONNECT", "PRI", "get", "G\u0000T", "");
  const header = fc.oneof(
    fc.constantFrom(
      `Authorization: Bearer ${world.apiKey}`,
      `Authorization: Bearer ${world.legacyToken}`,
      "Content-Type: application/json",
      "Content-Type: application/x-www-form-urlencoded",
      "Content-Length: 5",
      "Content-Length: -1",
      "Content-Length: 1, 2",
      "Content-Length: 99999999999999999999",
      "Transfer-Encoding: chunked",
      "Transfer-Encoding: chunked, identity",
      "Expect: 100-continue",
      "Connection: close",
      "Connection: keep-alive",
      "Host:",
      "X-Trace-Id: ../../x",
      "Bad Header: x",
      ": empty name",
      `X-Big: ${"b".repeat(17 * 1024)}`,
    ),
    fc.tuple(fc.string({ maxLength: 20 }), fc.string({ unit: "binary", maxLength: 40 })).map(([name, value]) => `${name}: ${value}`),
  );
  const body = fc.oneof(
    fc.constantFrom("", "{}", '{"user":{"phone":"+19148440001"}}', "5\r\nhello\r\n0\r\n\r\n", "zz\r\nx\r\n0\r\n\r\n", "0\r\n\r\nGET /v1/me HTTP/1.1\r\nHost: x\r\n\r\n", "a=1&b=2"),
    fc.string({ unit: "binary", maxLength: 200 }),
  );
  const version = fc.constantFrom("HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/9.9", "HTTP/1.1 extra", "");
  const structured = fc
    .tuple(method, target, version, fc.array(header, { maxLength: 6 }), body, fc.constantFrom("\r\n", "\n", "\r"))
    .map(([m, t, v, hs, b, eol]) => Buffer.from(`${m} ${t} ${v}${eol}Host: localhost${eol}${hs.join(eol)}${hs.length ? eol : ""}${eol}${b}`, "utf8"));
  return fc.oneof({ weight: 4, arbitrary: structured }, { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)) });
};

describe("fuzzing the self-hosted server over its socket", () => {
  let server: RunningServer;
  let world: FuzzWorld;
  const dataDir = temporaryDirectory("fuzz");

  before(async () => {
    // Short timeouts, so that a request whose body never comes is cut off quickly (408) rather than waited for.
    const env = { REACHKIT_SECRET: TEST_SECRET, LOG_LEVEL: "error", REACHKIT_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS), REACHKIT_REQUEST_TIMEOUT_MS: "2000" };
    server = await startServer(configFromEnv(env, { port: 0, dataDir }), () => undefined);
    world = await seedFuzzWorld(server.kit, { errors: [], settle: async () => undefined });
  });
  after(() => server?.close());

  // Each request has its own deadline (ANSWER_DEADLINE_MS), which is what catches a hang; the test's own timeout is only a
  // backstop, and generous, since the route table grows and a loaded CI machine answers a request in tens of milliseconds.
  it(`answers ${SOCKET_RUNS} random requests per route, sent over HTTP, with a 2xx or a documented 4xx`, { timeout: 900_000 }, async (t) => {
    for (const route of world.kit.http.routes) {
      let tried = 0;
      const started = performance.now();
      await fc.assert(
        fc.asyncProperty(requestArb(route, world, ROUTE_EXAMPLES[routeKey(route)]?.(world) ?? {}), async (request) => {
          const answer = await send(server.url, request);
          if (!answer) return;
          tried++;
          // A request line and headers over maxHeaderSize: node answers 431 itself and closes (README, resource limits).
          if (answer.status === 431 && answer.headers.connection === "close") return;
          // The short timeouts above cut off a request the loaded machine (client and server share this process) did not
          // finish sending in time: a 408 after the headers' timeout is that, not a fault. A quicker 408 still fails.
          if (answer.status === 408 && answer.elapsedMs >= HEADERS_TIMEOUT_MS) return;
          const problem = answerProblem(route, { ...answer, json: () => JSON.parse(answer.body) }, request.method);
          assert.equal(problem, undefined, `${problem}: ${answer.body.slice(0, 300)} for ${JSON.stringify(request).slice(0, 500)}`);
        }),
        fuzzOptions(SOCKET_RUNS),
      );
      t.diagnostic(`socket fuzz: ${routeKey(route)}: ${tried} requests ${Math.round(performance.now() - started)} ms`);
    }
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200, "still serving");
  });

  it(`survives ${RAW_RUNS} malformed byte streams: never a 5xx, never a connection left hanging, and /healthz answers afterwards`, { timeout: 600_000 }, async (t) => {
    const port = new URL(server.url).port;
    await fc.assert(
      fc.asyncProperty(rawRequest(world), async (bytes) => {
        const received = await sendRaw(Number(port), bytes);
        for (const [, status] of received.matchAll(/HTTP\/1\.[01] (\d{3})/g)) {
          assert.ok(Number(status) < 500, `answered ${status} to ${JSON.stringify(bytes.toString("latin1").slice(0, 300))}:\n${received.slice(0, 500)}`);
        }
      }),
      fuzzOptions(RAW_RUNS),
    );
    t.diagnostic(`raw byte streams: ${RAW_RUNS}`);
    const health = await fetch(`${server.url}/healthz`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: "ok" });
  });
});
