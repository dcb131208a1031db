import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { describe, it } from "node:test";
import * as v from "valibot";
import { fakeClock } from "../../adapters/clock/index.ts";
import { defineRoute, HttpCore, jsonBody, jsonLogger, rawBody, RateLimiter, reply, type NeutralRequest } from "../../src/index.ts";

function core() {
  const lines: Array<Record<string, unknown>> = [];
  const http = new HttpCore({
    routes: [
      defineRoute({ method: "GET", path: "/items/:id", auth: { kind: "none" }, handler: ({ params, method }) => reply.json(200, { id: params.id, method }) }),
      defineRoute({ method: "DELETE", path: "/items/:id", auth: { kind: "none" }, handler: () => reply.empty() }),
      defineRoute({ method: "GET", path: "/messages", host: "messages", auth: { kind: "none" }, handler: () => reply.json(200, {}) }),
      defineRoute({
        method: "GET",
        path: "/cookies",
        auth: { kind: "none" },
        handler: () => reply.json(200, {}, { "set-cookie": ["a=1", "b=2"] }),
      }),
      defineRoute({
        method: "PUT",
        path: "/upload",
        auth: { kind: "none" },
        body: rawBody(),
        async handler({ body }) {
          for await (const _chunk of body);
          return reply.empty();
        },
      }),
      defineRoute({ method: "POST", path: "/json", auth: { kind: "none" }, body: jsonBody(v.object({ a: v.string() })), handler: () => reply.empty() }),
      defineRoute({ method: "POST", path: "/small", auth: { kind: "none" }, body: jsonBody(v.object({ a: v.string() })), bodyLimitBytes: 16, handler: () => reply.empty() }),
      defineRoute({ method: "POST", path: "/roomy", auth: { kind: "none" }, body: jsonBody(v.object({ a: v.string() })), bodyLimitBytes: 4096, handler: () => reply.empty() }),
    ],
    bodyLimitBytes: 1024,
    logger: jsonLogger({ level: "debug", write: (line) => void lines.push(JSON.parse(line)) }),
    rateLimiter: new RateLimiter(fakeClock(), { default: 100 }),
    authenticate: async () => undefined,
  });
  return { http, lines };
}

/** A body that sends a few bytes, then fails the way a socket closed by the client does. */
function abortedBody(): Readable {
  const stream = new Readable({ read() {} });
  stream.push(Buffer.from("{\"a\":"));
  setImmediate(() => stream.destroy(Object.assign(new Error("aborted"), { code: "ECONNRESET" })));
  return stream;
}

const request = (method: string, url: string, extra: Partial<NeutralRequest> = {}): NeutralRequest => ({ method, url, headers: {}, ...extra });

describe("HttpCore routing for adapters", () => {
  it("looks a route up with decoded parameters, or says why none serves it", () => {
    const { http } = core();
    const found = http.lookup("GET", "/items/a%2Bb");
    assert.equal(found.kind, "found");
    assert.deepEqual(found.kind === "found" && found.params, { id: "a+b" });
    assert.deepEqual(http.lookup("post", "/items/1"), { kind: "method_not_allowed", allowed: ["GET", "DELETE"] });
    assert.deepEqual(http.lookup("GET", "/nowhere"), { kind: "not_found" });
    assert.deepEqual(http.lookup("OPTIONS", "/items/1"), { kind: "not_found" });
    assert.deepEqual(http.lookup("GET", "/messages", { groups: ["api"] }), { kind: "not_found" });
    assert.equal(http.lookup("GET", "/messages", { groups: ["messages"] }).kind, "found");
  });

  it("answers the lookup: the route, a 405 with Allow, or the JSON 404", async () => {
    const { http } = core();
    const notAllowed = await http.respond(http.lookup("PUT", "/items/1"), request("PUT", "/items/1"));
    assert.equal(notAllowed.status, 405);
    assert.equal(notAllowed.headers.allow, "GET, DELETE");
    const missing = await http.respond({ kind: "not_found" }, request("GET", "/nowhere?x=1"));
    assert.equal(missing.status, 404);
    assert.match(String(missing.body), /no route for GET \/nowhere"/);
  });

  it("serves HEAD with the GET route", async () => {
    const { http } = core();
    const head = await http.handle(request("HEAD", "/items/7"));
    assert.equal(head.status, 200);
    assert.deepEqual(JSON.parse(String(head.body)), { id: "7", method: "HEAD" });
    assert.equal((await http.handle(request("HEAD", "/upload"))).status, 405);
  });

  it("sends a header given as a list once per value", async () => {
    const { http } = core();
    assert.deepEqual((await http.handle(request("GET", "/cookies"))).headers["set-cookie"], ["a=1", "b=2"]);
  });

  it("answers 400 request_aborted, not a logged 500, when the client drops the body mid-way", async () => {
    for (const [method, url] of [["PUT", "/upload"], ["POST", "/json"]] as const) {
      const { http, lines } = core();
      const headers = { "content-type": "application/json", "transfer-encoding": "chunked" };
      const answer = await http.handle(request(method, url, { headers, body: { kind: "stream", stream: abortedBody() } }));
      assert.equal(answer.status, 400, String(answer.body));
      assert.equal(JSON.parse(String(answer.body)).error.code, "request_aborted");
      assert.deepEqual(lines.filter((line) => line.level === "error"), []);
    }
  });

  it("holds a route to its own body limit when smaller than the kit's, whether the core reads the body or the host parsed it", async () => {
    const { http } = core();
    const json = (text: string) => ({ headers: { "content-type": "application/json" }, body: { kind: "buffer" as const, buffer: Buffer.from(text) } });
    const sized = (size: number) => `{"a":"${"x".repeat(size - 8)}"}`;
    assert.equal(sized(16).length, 16);
    assert.equal((await http.handle(request("POST", "/small", json(sized(16))))).status, 204);
    const tooLarge = await http.handle(request("POST", "/small", json(sized(17))));
    assert.equal(tooLarge.status, 413);
    assert.match(JSON.parse(String(tooLarge.body)).error.message, /exceeds 16 bytes/);
    const parsed = (size: number) => ({ headers: { "content-type": "application/json" }, body: { kind: "parsed" as const, value: JSON.parse(sized(size)) } });
    assert.equal((await http.handle(request("POST", "/small", parsed(16)))).status, 204);
    assert.equal((await http.handle(request("POST", "/small", parsed(17)))).status, 413);
    // A route's limit never raises the kit's (1024 bytes here).
    assert.equal((await http.handle(request("POST", "/roomy", json(sized(1025))))).status, 413);
  });
});
