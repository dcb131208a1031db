import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { configFromEnv } from "../../server/config.ts";
import { serverPlugins } from "../../server/server-kit.ts";
import { startServer, type RunningServer } from "../../server/server.ts";
import { DEFAULT_BODY_LIMIT_BYTES, DEFAULT_RATE_LIMITS, type AnyRoute } from "../../src/index.ts";
import { startTestKit, TEST_SECRET, type Json, type TestKit } from "../support/test-kit.ts";
import { routeKey } from "./support/route-examples.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";

/** A raw connection: what the server sent, and whether it closed the connection. */
class RawClient {
  readonly socket: Socket;
  received = "";
  closed: Promise<void>;
  isClosed = false;

  constructor(port: number) {
    this.socket = connect(port, "127.0.0.1");
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

describe("connection limits of the self-hosted server (REACHKIT_* limits, README configuration)", () => {
  let server: RunningServer;
  let port: number;
  let apiKey: string;
  const dataDir = temporaryDirectory("limits");

  before(async () => {
    // Short timeouts so the test runs in seconds; the defaults are 10 s, 300 s and 5 s.
    const env = {
      REACHKIT_SECRET: TEST_SECRET,
      LOG_LEVEL: "error",
      REACHKIT_HEADERS_TIMEOUT_MS: "1000",
      REACHKIT_REQUEST_TIMEOUT_MS: "1500",
      REACHKIT_KEEP_ALIVE_TIMEOUT_MS: "500",
    };
    server = await startServer(configFromEnv(env, { port: 0, dataDir }), () => undefined);
    port = Number(new URL(server.url).port);
    apiKey = ((await server.kit.provisionCompany({ name: "Acme" })).output as Json).apiKey;
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
    assert.deepEqual(configFromEnv(env, { dataDir }).limits, {
      maxHeaderSize: 16_384,
      maxHeadersCount: 100,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 300_000,
      keepAliveTimeoutMs: 5_000,
    });
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

  it("answers every JSON and form body over 1 MiB, or over the route's own smaller limit, with 413 (and one at the limit with no 413)", async () => {
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
      const limit = Math.min(route.bodyLimitBytes ?? Infinity, DEFAULT_BODY_LIMIT_BYTES);
      const tooBig = await send(limit + 1);
      assert.equal(tooBig.status, 413, `${routeKey(route)}: ${tooBig.body.slice(0, 200)}`);
      assert.equal(t.json(tooBig).error.code, "payload_too_large");
      t.clock.advance(1_000);
      assert.notEqual((await send(limit)).status, 413, routeKey(route));
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
    // A second after the rate-limit test, whose last route may have spent the token's budget of this class.
    t.clock.advance(1_000);
    const response = await t.request({ method: "POST", url: "/v1/graphql", body: { query: `{ ${" ".repeat(100_000)} viewer { __typename } }` } });
    assert.equal(response.status, 400);
    assert.deepEqual(
      t.json(response).error.details.map((detail: Json) => detail.path),
      ["query"],
    );
  });
});
