import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { Agent } from "node:http";
import { after, before, describe, it } from "node:test";
import type { HostGroup } from "../http/route.ts";
import type { ReachkitConfigInput } from "../kernel/config.ts";
import type { ReachkitPlugin } from "../kernel/plugin.ts";
import type { Reachkit } from "../kernel/reachkit.ts";
import { call, open, type Answer, type Json } from "./http-client.ts";
import { CONFORMANCE_CONFIG, ConformanceProbe, conformancePlugin } from "./http-conformance-plugin.ts";

/** One kit on a host: at a path prefix ("" for the root), serving all host groups or only some. */
export interface KitMount {
  kit: Reachkit;
  prefix: string;
  groups?: readonly HostGroup[];
}

export interface HostOptions {
  /**
   * Install the host's body parsers for JSON and forms in front of reachkit
   * (Express: `express.json()` and `express.urlencoded()`; connect-style hosts:
   * a middleware setting `req.body`). Hosts whose parsers never reach
   * reachkit's routes (Fastify's scoped parsers, fetch) ignore it.
   */
  hostParsesBodies: boolean;
}

export interface MountedHost {
  /** Base URL, no trailing slash: `http://127.0.0.1:PORT`. */
  url: string;
  /** Closes the server; the suite stops the kits itself. */
  close(): Promise<void>;
}

/**
 * How the suite builds kits and serves them through the adapter under test.
 * `mount` starts a real server (port 0) hosting the kits in order, each through
 * the adapter with its prefix and groups, plus the host's own routes:
 *
 * - `GET /host/hello` answers 200 `{"host": "hello"}`;
 * - `POST /host/echo` answers 200 `{"host": <the JSON body, parsed by the host>}`;
 * - anything no kit and no host route serves answers 404 (any body).
 */
export interface HttpAdapterHarness {
  /**
   * An unstarted kit with `accountsPlugin()` and the given plugins and config,
   * on fresh storage (memory adapters), a fake clock and the manual scheduler.
   */
  makeKit(options: { plugins: readonly ReachkitPlugin[]; config: ReachkitConfigInput }): Reachkit;
  mount(mounts: readonly KitMount[], options: HostOptions): Promise<MountedHost>;
}

interface SuiteKit {
  kit: Reachkit;
  probe: ConformanceProbe;
  apiKey: string;
  legacyToken: string;
}

interface Hosted {
  url: string;
  kits: SuiteKit[];
  hosts: MountedHost[];
}

const MiB = 1024 * 1024;
const LIMIT = CONFORMANCE_CONFIG.bodyLimitBytes!;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const json = (token: string) => ({ ...bearer(token), "content-type": "application/json" });
const FORM = { "content-type": "application/x-www-form-urlencoded" };

async function startKit(harness: HttpAdapterHarness, companyName: string): Promise<SuiteKit> {
  const probe = new ConformanceProbe();
  const kit = harness.makeKit({ plugins: [conformancePlugin(probe)], config: CONFORMANCE_CONFIG });
  await kit.start();
  const { output } = await kit.provisionCompany({ name: companyName });
  assert.equal(typeof output.apiKey, "string", "makeKit must install accountsPlugin() beside the plugins it is given");
  return { kit, probe, apiKey: output.apiKey as string, legacyToken: output.legacyToken as string };
}

/** Starts kits and hosts before the tests of a describe block and stops them after. */
function hosted(setup: () => Promise<Hosted>): () => Hosted {
  let state: Hosted | undefined;
  before(async () => {
    state = await setup();
  });
  after(async () => {
    for (const host of state?.hosts ?? []) await host.close();
    for (const { kit } of state?.kits ?? []) await kit.stop();
  });
  return () => state!;
}

async function assertError(answer: Answer, status: number, code: string): Promise<Json> {
  assert.equal(answer.status, status, answer.body);
  assert.equal(answer.headers["content-type"], "application/json");
  const body = answer.json();
  assert.equal(body.error.code, code);
  assert.equal(body.error.id, answer.headers["x-trace-id"]);
  assert.equal(typeof body.error.message, "string");
  return body.error;
}

/** Uploads `total` bytes in 1 MiB chunks, after the first waiting until the route has received it: proof the body streams. */
async function streamedUpload(url: string, kit: SuiteKit, tag: string, total: number): Promise<{ answer: Answer; sha256: string }> {
  const chunk = Buffer.alloc(MiB, tag);
  const hash = createHash("sha256");
  const upload = open(`${url}/conformance/uploads/${tag}`, {
    method: "PUT",
    headers: { "content-type": "application/octet-stream", "content-length": String(total) },
  });
  for (let sent = 0; sent < total; sent += chunk.length) {
    await upload.write(chunk);
    hash.update(chunk);
    if (sent === 0) await kit.probe.received(tag, chunk.length);
  }
  upload.end();
  return { answer: await upload.answer, sha256: hash.digest("hex") };
}

/**
 * The conformance suite of an HTTP adapter, over real sockets: bodies (JSON,
 * form, a 50 MB streamed upload), parameters, headers, every error status of
 * the pipeline, prefixes, fall-through to the host's routes, two kits in one
 * host, host-parsed bodies, host groups, aborted uploads, keep-alive and
 * graceful shutdown. Every adapter must give the same answers.
 *
 *     httpAdapterConformance("express", { makeKit, mount });
 */
export function httpAdapterConformance(adapterName: string, harness: HttpAdapterHarness): void {
  /** One kit of company "Acme" on one host; `url` is the kit's base URL (host and prefix). */
  const oneKit = (prefix: string, options: HostOptions) =>
    hosted(async () => {
      const acme = await startKit(harness, "Acme");
      const host = await harness.mount([{ kit: acme.kit, prefix }], options);
      return { url: `${host.url}${prefix}`, kits: [acme], hosts: [host] };
    });

  describe(`HTTP adapter conformance: ${adapterName}`, () => {
    describe("one kit under a prefix", () => {
      const env = oneKit("/reachkit", { hostParsesBodies: false });

      it("serves GET /v1/me with the company, the trace id and the rate-limit headers", async () => {
        const { url, kits: [acme] } = env();
        const me = await call(`${url}/v1/me`, { headers: bearer(acme!.apiKey) });
        assert.equal(me.status, 200, me.body);
        assert.equal(me.headers["content-type"], "application/json");
        assert.deepEqual(Object.keys(me.json()).sort(), ["applicationName", "attentiveDomainName", "companyId", "companyName", "contactEmail"]);
        assert.equal(me.json().companyName, "Acme");
        assert.match(String(me.headers["x-trace-id"]), /^[0-9a-f-]{36}$/);
        assert.equal(me.headers["x-ratelimit-limit"], "100000");
        const traced = await call(`${url}/v1/me`, { headers: { ...bearer(acme!.apiKey), "x-trace-id": "conformance-trace-1" } });
        assert.equal(traced.headers["x-trace-id"], "conformance-trace-1");
        const anonymous = await assertError(await call(`${url}/v1/me`), 401, "unauthorized");
        assert.match(anonymous.message, /Authorization/);
      });

      it("answers HEAD like GET, without a body", async () => {
        const { url, kits: [acme] } = env();
        const head = await call(`${url}/v1/me`, { method: "HEAD", headers: bearer(acme!.apiKey) });
        assert.equal(head.status, 200);
        assert.equal(head.headers["content-type"], "application/json");
        assert.equal(head.body, "");
      });

      it("parses JSON bodies, drops unknown fields and names every wrong one", async () => {
        const { url, kits: [acme] } = env();
        const headers = json(acme!.apiKey);
        const ok = await call(`${url}/conformance/json`, { method: "POST", headers, body: JSON.stringify({ name: "a", count: 2, tags: ["x"], extra: true }) });
        assert.equal(ok.status, 200, ok.body);
        assert.deepEqual(ok.json(), { received: { name: "a", count: 2, tags: ["x"] } });
        const charset = await call(`${url}/conformance/json`, {
          method: "POST",
          headers: { ...headers, "content-type": "application/json; charset=utf-8" },
          body: '{"name":"\u00e9"}',
        });
        assert.deepEqual(charset.json(), { received: { name: "\u00e9" } });
        const wrong = await assertError(await call(`${url}/conformance/json`, { method: "POST", headers, body: '{"name":5,"count":"x"}' }), 400, "invalid_request");
        assert.deepEqual(wrong.details.map((detail: { path: string }) => detail.path).sort(), ["count", "name"]);
        const array = await assertError(await call(`${url}/conformance/json`, { method: "POST", headers, body: "[1]" }), 400, "invalid_request");
        assert.deepEqual(array.details.map((detail: { path: string }) => detail.path), ["body"]);
        await assertError(await call(`${url}/conformance/json`, { method: "POST", headers, body: '{"name":' }), 400, "invalid_json");
        await assertError(await call(`${url}/conformance/json`, { method: "POST", headers, body: "" }), 400, "invalid_request");
      });

      it("refuses another content type with 415 and a body over the limit with 413, closing the connection", async () => {
        const { url, kits: [acme] } = env();
        const plain = await call(`${url}/conformance/json`, { method: "POST", headers: { ...bearer(acme!.apiKey), "content-type": "text/plain" }, body: '{"name":"a"}' });
        await assertError(plain, 415, "unsupported_media_type");

        // Declared too large: refused before a byte of the body is read.
        const declared = open(`${url}/conformance/json`, { method: "POST", headers: { ...json(acme!.apiKey), "content-length": String(LIMIT + 1) } });
        declared.request.flushHeaders();
        const tooLarge = await declared.answer;
        declared.request.destroy();
        await assertError(tooLarge, 413, "payload_too_large");
        assert.equal(tooLarge.headers.connection, "close");

        // Chunked, with no length: refused as soon as it passes the limit, without waiting for the end.
        const chunked = open(`${url}/conformance/json`, { method: "POST", headers: { ...json(acme!.apiKey), "transfer-encoding": "chunked" } });
        await chunked.write(Buffer.alloc(LIMIT + 1, "a"));
        const overflow = await chunked.answer;
        chunked.request.destroy();
        await assertError(overflow, 413, "payload_too_large");
        assert.equal(overflow.headers.connection, "close");
      });

      it("parses form bodies: the first of a repeated key, + as a space, %2B as a plus", async () => {
        const { url } = env();
        const form = await call(`${url}/conformance/form`, { method: "POST", headers: FORM, body: "From=%2B15555550100&Body=hi+there&From=%2B19999999999&Other=1" });
        assert.equal(form.status, 200, form.body);
        assert.deepEqual(form.json(), { received: { From: "+15555550100", Body: "hi there" } });
        const missing = await assertError(await call(`${url}/conformance/form`, { method: "POST", headers: FORM, body: "Body=x" }), 400, "invalid_request");
        assert.deepEqual(missing.details.map((detail: { path: string }) => detail.path), ["From"]);
        await assertError(await call(`${url}/conformance/form`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"From":"+1"}' }), 415, "unsupported_media_type");
      });

      it("streams a 50 MB upload to its route as it arrives, never buffering it whole", { timeout: 120_000 }, async () => {
        const { url, kits: [acme] } = env();
        const { answer, sha256 } = await streamedUpload(url, acme!, "big", 50 * MiB);
        assert.equal(answer.status, 200, answer.body);
        assert.deepEqual(answer.json(), { outcome: "complete", bytes: 50 * MiB, sha256 });
      });

      it("hands over path parameters decoded and the query string as sent, repeated keys included", async () => {
        const { url } = env();
        const answer = await call(`${url}/conformance/params/a%2Bb%2Fc/and/caf%C3%A9%20au%20lait?phone=%2B15555550100&tag=x&tag=y&plus=+1&empty=`);
        assert.equal(answer.status, 200, answer.body);
        assert.deepEqual(answer.json(), {
          params: { first: "a+b/c", second: "caf\u00e9 au lait" },
          query: { phone: "+15555550100", tag: ["x", "y"], plus: " 1", empty: "" },
          path: "/conformance/params/a%2Bb%2Fc/and/caf%C3%A9%20au%20lait",
        });
      });

      it("reads a repeated request header and sends a repeated response header", async () => {
        const { url } = env();
        const answer = await call(`${url}/conformance/headers`, { headers: { "x-conformance-tag": ["one", "two"] } });
        assert.equal(answer.status, 200, answer.body);
        assert.deepEqual(answer.json(), { tag: "one, two" });
        assert.deepEqual(answer.headers["set-cookie"], ["first=1; Path=/", "second=2; Path=/"]);
        assert.equal(answer.headers["x-conformance"], "yes");
        const empty = await call(`${url}/conformance/headers`, { method: "DELETE" });
        assert.equal(empty.status, 204);
        assert.equal(empty.body, "");
      });

      it("answers every error of the pipeline as JSON carrying the trace id", async () => {
        const { url, kits: [acme] } = env();
        await assertError(await call(`${url}/conformance/json`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }), 401, "unauthorized");
        await assertError(await call(`${url}/v1/me`, { headers: bearer(acme!.legacyToken) }), 401, "unauthorized");
        await assertError(await call(`${url}/conformance/legacy`, { method: "POST", headers: bearer("rk_leg_unknown") }), 403, "forbidden");
        assert.equal((await call(`${url}/conformance/legacy`, { method: "POST", headers: bearer(acme!.legacyToken) })).status, 200);
        await assertError(await call(`${url}/conformance/missing`), 404, "not_found");
        const wrongMethod = await call(`${url}/v1/me`, { method: "POST", headers: json(acme!.apiKey), body: "{}" });
        await assertError(wrongMethod, 405, "method_not_allowed");
        assert.equal(wrongMethod.headers.allow, "GET");
        const limited = await call(`${url}/conformance/limited`, { headers: bearer(acme!.apiKey) });
        await assertError(limited, 429, "rate_limited");
        assert.equal(limited.headers["retry-after"], "1");
      });

      it("serves its routes under its prefix only", async () => {
        const { url, hosts: [host], kits: [acme] } = env();
        assert.equal((await call(`${host!.url}/v1/me`, { headers: bearer(acme!.apiKey) })).status, 404);
        assert.equal((await call(`${host!.url}/reachkitty/v1/me`, { headers: bearer(acme!.apiKey) })).status, 404);
        assert.equal((await call(`${url}/nothing-here`)).status, 404);
        assert.equal((await call(`${url}/v1/me`, { headers: bearer(acme!.apiKey) })).status, 200);
      });

      it("leaves the host's own routes, their body parsing and OPTIONS to the host", async () => {
        const { url, hosts: [host] } = env();
        const hello = await call(`${host!.url}/host/hello`);
        assert.equal(hello.status, 200, hello.body);
        assert.deepEqual(hello.json(), { host: "hello" });
        const echo = await call(`${host!.url}/host/echo`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"a":[1,2]}' });
        assert.equal(echo.status, 200, echo.body);
        assert.deepEqual(echo.json(), { host: { a: [1, 2] } });
        // No reachkit route serves OPTIONS: a CORS preflight is the host's to answer.
        const preflight = await call(`${url}/v1/me`, { method: "OPTIONS", headers: { origin: "https://app.example", "access-control-request-method": "GET" } });
        assert.equal(preflight.status, 404);
        assert.equal(preflight.headers["x-trace-id"], undefined);
      });

      it("keeps the connection alive across answers, errors included", async () => {
        const { url, hosts: [host], kits: [acme] } = env();
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        try {
          const answers = [
            await call(`${url}/v1/me`, { agent, headers: bearer(acme!.apiKey) }),
            await call(`${url}/v1/me`, { agent, method: "POST", headers: json(acme!.apiKey), body: JSON.stringify({ filler: "x".repeat(32 * 1024) }) }),
            await call(`${url}/conformance/json`, { agent, method: "POST", headers: json(acme!.apiKey), body: "{oops" }),
            await call(`${host!.url}/host/hello`, { agent }),
            await call(`${url}/conformance/missing`, { agent }),
            await call(`${url}/v1/me`, { agent, headers: bearer(acme!.apiKey) }),
          ];
          assert.deepEqual(answers.map((answer) => answer.status), [200, 405, 400, 200, 404, 200]);
          assert.deepEqual(answers.slice(1).map((answer) => answer.reusedSocket), [true, true, true, true, true]);
        } finally {
          agent.destroy();
        }
      });

      it("survives a client that aborts mid-upload: the route sees the body fail and the server keeps serving", async () => {
        const { url, kits: [acme] } = env();
        const upload = open(`${url}/conformance/uploads/aborted`, { method: "PUT", headers: { "content-type": "application/octet-stream", "transfer-encoding": "chunked" } });
        upload.answer.catch(() => undefined);
        await upload.write(Buffer.alloc(256 * 1024, "x"));
        await acme!.probe.received("aborted", 256 * 1024);
        upload.request.destroy();
        const ended = await acme!.probe.uploadEnded("aborted");
        assert.equal(ended.outcome, "failed");
        assert.equal(ended.bytes, 256 * 1024);
        assert.equal((await call(`${url}/v1/me`, { headers: bearer(acme!.apiKey) })).status, 200);
      });
    });

    describe("host body parsers installed in front of reachkit", () => {
      const env = oneKit("/reachkit", { hostParsesBodies: true });

      it("reuses bodies the host parsed, with the same answers, and still streams raw uploads", async () => {
        const { url, hosts: [host], kits: [acme] } = env();
        const headers = json(acme!.apiKey);
        const ok = await call(`${url}/conformance/json`, { method: "POST", headers, body: JSON.stringify({ name: "a", count: 2, extra: true }) });
        assert.equal(ok.status, 200, ok.body);
        assert.deepEqual(ok.json(), { received: { name: "a", count: 2 } });
        const wrong = await assertError(await call(`${url}/conformance/json`, { method: "POST", headers, body: '{"name":5}' }), 400, "invalid_request");
        assert.deepEqual(wrong.details.map((detail: { path: string }) => detail.path), ["name"]);
        const form = await call(`${url}/conformance/form`, { method: "POST", headers: FORM, body: "From=%2B15555550100&Body=hi+there" });
        assert.deepEqual(form.json(), { received: { From: "+15555550100", Body: "hi there" } });
        const { answer, sha256 } = await streamedUpload(url, acme!, "after-parsers", 2 * MiB);
        assert.deepEqual(answer.json(), { outcome: "complete", bytes: 2 * MiB, sha256 });
        const echo = await call(`${host!.url}/host/echo`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"a":1}' });
        assert.deepEqual(echo.json(), { host: { a: 1 } });
      });
    });

    describe("two kits in one host, one at the root", () => {
      const env = hosted(async () => {
        const first = await startKit(harness, "First");
        const second = await startKit(harness, "Second");
        const host = await harness.mount(
          [
            { kit: first.kit, prefix: "" },
            { kit: second.kit, prefix: "/second" },
          ],
          { hostParsesBodies: false },
        );
        return { url: host.url, kits: [first, second], hosts: [host] };
      });

      it("serves each kit its own companies and passes what neither serves to the host", async () => {
        const { url, kits: [first, second] } = env();
        assert.equal((await call(`${url}/v1/me`, { headers: bearer(first!.apiKey) })).json().companyName, "First");
        assert.equal((await call(`${url}/second/v1/me`, { headers: bearer(second!.apiKey) })).json().companyName, "Second");
        await assertError(await call(`${url}/second/v1/me`, { headers: bearer(first!.apiKey) }), 401, "unauthorized");
        await assertError(await call(`${url}/v1/me`, { headers: bearer(second!.apiKey) }), 401, "unauthorized");
        assert.deepEqual((await call(`${url}/host/hello`)).json(), { host: "hello" });
        assert.equal((await call(`${url}/second/nothing-here`)).status, 404);
      });
    });

    describe("host groups on separate listeners", () => {
      const env = hosted(async () => {
        const acme = await startKit(harness, "Acme");
        const api = await harness.mount([{ kit: acme.kit, prefix: "", groups: ["api"] }], { hostParsesBodies: false });
        const messages = await harness.mount([{ kit: acme.kit, prefix: "", groups: ["messages"] }], { hostParsesBodies: false });
        return { url: api.url, kits: [acme], hosts: [api, messages] };
      });

      it("serves on each listener only the routes of its groups", async () => {
        const { hosts: [api, messages], kits: [acme] } = env();
        assert.equal((await call(`${api!.url}/v1/me`, { headers: bearer(acme!.apiKey) })).status, 200);
        assert.equal((await call(`${api!.url}/conformance/group`)).status, 404);
        assert.deepEqual((await call(`${messages!.url}/conformance/group`)).json(), { group: "messages" });
        assert.equal((await call(`${messages!.url}/v1/me`, { headers: bearer(acme!.apiKey) })).status, 404);
      });
    });

    describe("graceful shutdown", () => {
      const env = oneKit("", { hostParsesBodies: false });

      it("answers 503 to new requests while the kit stops and lets those under way finish", async () => {
        const { url, kits: [acme] } = env();
        const slow = call(`${url}/conformance/slow/last`);
        await acme!.probe.slowStarted("last");
        const stopped = acme!.kit.stop();
        const refused = await call(`${url}/v1/me`, { headers: bearer(acme!.apiKey) });
        await assertError(refused, 503, "shutting_down");
        acme!.probe.release("last");
        const finished = await slow;
        assert.equal(finished.status, 200, finished.body);
        assert.deepEqual(finished.json(), { released: "last" });
        await stopped;
      });
    });
  });
}
