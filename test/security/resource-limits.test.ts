import assert from "node:assert/strict";
import { connect, type AddressInfo, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { createLimitedServer, nodeHttpServer, type NodeHttpServer } from "../../adapters/http/node/index.ts";
import { configFromEnv } from "../../server/config.ts";
import { serverPlugins } from "../../server/server-kit.ts";
import { startServer, type RunningServer } from "../../server/server.ts";
import { DEFAULT_BODY_LIMIT_BYTES, DEFAULT_RATE_LIMITS, type AnyRoute } from "../../src/index.ts";
import { startTestKit, TEST_SECRET, type Json, type TestKit } from "../support/test-kit.ts";
import { routeKey } from "./support/route-examples.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";
import { waitUntil } from "../support/wait.ts";

/** A raw connection: what the server sent, and whether it closed the connection. */
class RawClient {
  readonly socket: Socket;
  received = "";
  closed: Promise<void>;
  isClosed = false;

  constructor(port: number, localAddress?: string) {
    this.socket = connect({ port, host: "127.0.0.1", localAddress });
    this.socket.on("data", (chunk) => (this.received += chunk.toString("latin1")));
    this.socket.on("error", () => undefined);
    this.closed = new Promise((resolve) => this.socket.on("close", () => resolve(void (this.isClosed = true))));
  }

  /** Sends `bytes` one at a time, `gapMs` apart, until all are sent or the server closes the connection; answers how many went. */
  async drip(bytes: string, gapMs: number): Promise<number> {
    for (let sent = 0; sent < bytes.length; sent++) {
      if (this.isClosed) return sent;
      this.socket.write(bytes[sent]!);
      await Promise.race([new Promise((resolve) => setTimeout(resolve, gapMs)), this.closed]);
    }
    return bytes.length;
  }
}

const statusOf = (received: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1]);

/** The self-hosted server with these limits (environment variables), its port and the API key of its company. */
async function limitedServer(dataDir: string, limits: Record<string, string>): Promise<{ server: RunningServer; port: number; apiKey: string }> {
  const server = await startServer(configFromEnv({ REACHKIT_SECRET: TEST_SECRET, LOG_LEVEL: "error", ...limits }, { port: 0, dataDir }), () => undefined);
  const apiKey = ((await server.kit.provisionCompany({ name: "Acme" })).output as Json).apiKey;
  return { server, port: Number(new URL(server.url).port), apiKey };
}

describe("connection limits of the self-hosted server (REACHKIT_* limits, README configuration)", () => {
  let server: RunningServer;
  let port: number;
  let apiKey: string;
  const dataDir = temporaryDirectory("limits");

  before(async () => {
    // Short timeouts so the test runs in seconds; the defaults are 10 s, 300 s and 5 s.
    ({ server, port, apiKey } = await limitedServer(dataDir, {
      REACHKIT_HEADERS_TIMEOUT_MS: "1000",
      REACHKIT_REQUEST_TIMEOUT_MS: "1500",
      REACHKIT_KEEP_ALIVE_TIMEOUT_MS: "500",
    }));
  });
  after(() => server?.close());

  it("answers a header block over 16 KiB with 431 and closes the connection", async () => {
    const client = new RawClient(port);
    client.socket.write(`GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nX-Big: ${"b".repeat(16 * 1024)}\r\n\r\n`);
    await client.closed;
    assert.equal(statusOf(client.received), 431);
    const fits = await fetch(`${server.url}/v1/me`, { headers: { authorization: `Bearer ${apiKey}`, "x-big": "b".repeat(8 * 1024) } });
    assert.equal(fits.status, 200, "an 8 KiB header is fine");
  });

  it("reads the first 100 header lines of a request and drops the rest", async () => {
    const filler = Array.from({ length: 110 }, (_, i) => [`x-filler-${i}`, "1"] as const);
    const send = (headers: (readonly [string, string])[]) => {
      const client = new RawClient(port);
      client.socket.write(`GET /v1/me HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${headers.map(([name, value]) => `${name}: ${value}\r\n`).join("")}\r\n`);
      return client.closed.then(() => statusOf(client.received));
    };
    const authorization = ["authorization", `Bearer ${apiKey}`] as const;
    assert.equal(await send([authorization, ...filler]), 200, "the token among the first 100 lines is read");
    assert.equal(await send([...filler, authorization]), 401, "the token after 110 other lines is not");
  });

  it("cuts off a client that sends its headers one byte at a time: 408 and the connection closed", { timeout: 30_000 }, async () => {
    const client = new RawClient(port);
    const request = `GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nX-Slow: ${"s".repeat(200)}\r\n\r\n`;
    const sent = await client.drip(request, 100);
    await client.closed;
    assert.ok(sent < request.length, `the server waited for all ${request.length} bytes`);
    assert.equal(statusOf(client.received), 408);
  });

  it("cuts off a client that sends its body one byte at a time, and keeps serving others", { timeout: 30_000 }, async () => {
    const client = new RawClient(port);
    const body = JSON.stringify({ user: { phone: "+19148440001" }, locale: "en-US", subscriptionType: "MARKETING", padding: "p".repeat(200) });
    client.socket.write(
      `POST /v1/subscriptions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    const sent = await client.drip(body, 100);
    await client.closed;
    assert.ok(sent < body.length, `the server waited for all ${body.length} bytes of the body`);
    assert.doesNotMatch(client.received, /HTTP\/1\.1 5\d\d/);
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
  });

  it("closes a keep-alive connection left idle", { timeout: 30_000 }, async () => {
    const client = new RawClient(port);
    client.socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`);
    await client.closed;
    assert.equal(statusOf(client.received), 200, "answered, then closed once idle");
  });

  it("refuses limits that are not positive whole numbers, or a headers timeout longer than the request timeout", () => {
    const env = { REACHKIT_SECRET: TEST_SECRET };
    assert.throws(() => configFromEnv({ ...env, REACHKIT_HEADERS_TIMEOUT_MS: "soon" }, { dataDir }), /REACHKIT_HEADERS_TIMEOUT_MS/);
    assert.throws(() => configFromEnv({ ...env, REACHKIT_MAX_HEADER_BYTES: "-1" }, { dataDir }), /REACHKIT_MAX_HEADER_BYTES/);
    assert.throws(() => configFromEnv({ ...env, REACHKIT_HEADERS_TIMEOUT_MS: "5000", REACHKIT_REQUEST_TIMEOUT_MS: "1000" }, { dataDir }), /must not exceed/);
    assert.throws(() => configFromEnv({ ...env, REACHKIT_BODY_IDLE_TIMEOUT_MS: "0" }, { dataDir }), /REACHKIT_BODY_IDLE_TIMEOUT_MS/);
    assert.throws(() => configFromEnv({ ...env, REACHKIT_MAX_CONNECTIONS_PER_ADDRESS: "many" }, { dataDir }), /REACHKIT_MAX_CONNECTIONS_PER_ADDRESS/);
    assert.deepEqual(configFromEnv(env, { dataDir }).limits, {
      maxHeaderSize: 16_384,
      maxHeadersCount: 100,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 300_000,
      bodyIdleTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
      maxConnectionsPerAddress: 256,
    });
  });
});

describe("a stalled request body (REACHKIT_BODY_IDLE_TIMEOUT_MS)", () => {
  let server: RunningServer;
  let port: number;
  let apiKey: string;
  const dataDir = temporaryDirectory("limits");

  before(async () => {
    // A request timeout far beyond the test's own: only the idle gap can end these requests.
    ({ server, port, apiKey } = await limitedServer(dataDir, { REACHKIT_REQUEST_TIMEOUT_MS: "600000", REACHKIT_BODY_IDLE_TIMEOUT_MS: "500" }));
  });
  const clients: RawClient[] = [];
  // A graceful close waits for requests under way: a stalled body left open would hold it.
  after(() => {
    for (const client of clients) client.socket.destroy();
    return server?.close();
  });
  const rawClient = () => {
    const client = new RawClient(port);
    clients.push(client);
    return client;
  };

  const postHead = (length: number) =>
    `POST /v1/subscriptions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

  it("answers a POST that declares Content-Length: 100000 and sends nothing with 408 and closes it", { timeout: 30_000 }, async () => {
    const client = rawClient();
    client.socket.write(postHead(100_000));
    await client.closed;
    assert.equal(statusOf(client.received), 408);
    assert.match(client.received, /\r\n\r\n\{"error":\{"code":"request_timeout","message":"the request body stalled: no byte came for 500 ms"\}\}$/);
  });

  it("closes a body that stops halfway, and reads whole a body whose bytes come slowly but without a long gap", { timeout: 30_000 }, async () => {
    const body = JSON.stringify({ user: { phone: "+19148440001" }, locale: "en-US", subscriptionType: "MARKETING" });
    const stopping = rawClient();
    stopping.socket.write(postHead(body.length) + body.slice(0, 20));
    await stopping.closed;
    assert.equal(statusOf(stopping.received), 408);

    // Each byte 100 ms after the last: the whole body takes far longer than the idle gap.
    const steady = rawClient();
    steady.socket.write(postHead(body.length));
    assert.equal(await steady.drip(body, 100), body.length);
    await waitUntil("the answer", () => statusOf(steady.received) > 0);
    assert.equal(statusOf(steady.received), 202, steady.received);
  });
});

describe("the body-progress timeout and a server slower than its client (createLimitedServer)", () => {
  it("does not cut a body the server is behind reading: its unread bytes count as progress", { timeout: 30_000 }, async () => {
    const bodyBytes = 4 * 1024 * 1024;
    const server = createLimitedServer({ bodyIdleTimeoutMs: 200 }, (request, response) => {
      // Reads nothing for five idle gaps: the request's buffer fills, node pauses the socket, the client is held back.
      setTimeout(() => {
        let received = 0;
        request.on("data", (chunk: Buffer) => (received += chunk.length));
        request.on("end", () => response.end(String(received)));
      }, 1_000);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const answer = await fetch(`http://127.0.0.1:${port}/`, { method: "POST", body: Buffer.alloc(bodyBytes, 120) });
      assert.equal(answer.status, 200);
      assert.equal(await answer.text(), String(bodyBytes));
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("open connections per client address (nodeHttpServer limits, REACHKIT_MAX_CONNECTIONS_PER_ADDRESS)", () => {
  const CAP = 4;
  let t: TestKit;
  let server: NodeHttpServer;
  let port: number;
  before(async () => {
    t = await startTestKit({ plugins: serverPlugins() });
    server = nodeHttpServer(t.kit, { limits: { maxConnectionsPerAddress: CAP, keepAliveTimeoutMs: 600_000 } });
    port = (await server.listen(0)).port;
  });
  after(() => server?.close());

  /** A raw connection that was served one request and stays open (keep-alive). */
  async function servedConnection(localAddress?: string): Promise<RawClient> {
    const client = new RawClient(port, localAddress);
    client.socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    await Promise.race([waitUntil("an answer", () => client.received.includes("\r\n\r\n")), client.closed]);
    return client;
  }
  const openConnections = () => new Promise<number>((resolve, reject) => server.server.getConnections((error, count) => (error ? reject(error) : resolve(count))));

  it("closes the connection over the cap from one address at once, while the others and other addresses are served", { timeout: 30_000 }, async () => {
    const open = await Promise.all(Array.from({ length: CAP }, () => servedConnection()));
    for (const client of open) assert.equal(statusOf(client.received), 404, "each of the first four is served (no /healthz route on a bare kit)");

    const refused = await servedConnection();
    assert.equal(refused.isClosed, true);
    assert.equal(refused.received, "", "closed before an answer");

    const otherAddress = await servedConnection("127.0.0.2");
    assert.equal(statusOf(otherAddress.received), 404, "another address has its own count");
    assert.equal(otherAddress.isClosed, false);

    open[0]!.socket.destroy();
    await waitUntil("the server to see the close", async () => (await openConnections()) === CAP);
    const again = await servedConnection();
    assert.equal(statusOf(again.received), 404, "a place freed is taken again");
    for (const client of [...open, otherAddress, again]) client.socket.destroy();
  });
});

describe("body and rate limits on every route of the server's plugins", () => {
  let t: TestKit;
  let routes: readonly AnyRoute[];
  before(async () => {
    t = await startTestKit({ plugins: serverPlugins() });
    routes = t.kit.http.routes;
  });
  after(() => t.stop());

  const tokenFor = (route: AnyRoute) => (route.auth.kind === "legacy" ? t.company.legacyToken : route.auth.kind === "api" ? t.company.apiKey : null);

  it("answers every JSON and form body over 1 MiB with 413 (and one of 1 MiB with no 413)", async () => {
    const parsed = routes.filter((route) => route.body?.kind === "json" || route.body?.kind === "form");
    assert.ok(parsed.length >= 15, "the server's JSON and form routes are found");
    for (const route of parsed) {
      t.clock.advance(1_000); // a fresh rate-limit window
      const json = route.body?.kind === "json";
      const send = (bytes: number) =>
        t.request({
          method: route.method,
          url: route.path.replace(/:\w+/g, "x"),
          token: tokenFor(route),
          headers: { "content-type": json ? "application/json" : "application/x-www-form-urlencoded" },
          body: json ? `{"a":"${"x".repeat(bytes - 8)}"}` : `a=${"x".repeat(bytes - 2)}`,
        });
      const tooBig = await send(DEFAULT_BODY_LIMIT_BYTES + 1);
      assert.equal(tooBig.status, 413, `${routeKey(route)}: ${tooBig.body.slice(0, 200)}`);
      assert.equal(t.json(tooBig).error.code, "payload_too_large");
      t.clock.advance(1_000);
      assert.notEqual((await send(DEFAULT_BODY_LIMIT_BYTES)).status, 413, routeKey(route));
    }
  });

  it("answers a token-exchange form over 1 MiB with 413 in the OAuth error shape", async () => {
    const response = await t.request({
      method: "POST",
      url: "/v1/authorization-codes/tokens",
      token: null,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `code=${"x".repeat(DEFAULT_BODY_LIMIT_BYTES)}`,
    });
    assert.equal(response.status, 413);
    assert.equal(t.json(response).error, "invalid_request");
  });

  it("answers the request past each route's per-token budget with 429 and Retry-After, and counts legacy tokens too", async () => {
    const limited = routes.filter((route) => route.auth.kind !== "none");
    assert.ok(limited.length >= 25);
    for (const route of limited) {
      const routeClass = route.rateLimit ?? "default";
      const limit = DEFAULT_RATE_LIMITS[routeClass] ?? DEFAULT_RATE_LIMITS.default!;
      t.clock.advance(1_000);
      const send = () => t.request({ method: route.method, url: route.path.replace(/:\w+/g, "x"), token: tokenFor(route) });
      for (let i = 0; i < limit; i++) assert.notEqual((await send()).status, 429, `${routeKey(route)}: request ${i + 1} of ${limit}`);
      const refused = await send();
      assert.equal(refused.status, 429, `${routeKey(route)} (${routeClass}, ${limit}/s)`);
      assert.equal(refused.headers["retry-after"], "1");
      assert.equal(refused.headers["x-ratelimit-limit"], String(limit));
      assert.equal(t.json(refused).error.code, "rate_limited");
    }
  });

  it("caps GraphQL query text at 100,000 characters (400 naming query)", async () => {
    const response = await t.request({ method: "POST", url: "/v1/graphql", body: { query: `{ ${" ".repeat(100_000)} viewer { __typename } }` } });
    assert.equal(response.status, 400);
    assert.deepEqual(
      t.json(response).error.details.map((detail: Json) => detail.path),
      ["query"],
    );
  });
});
