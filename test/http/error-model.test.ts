import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as v from "valibot";
import { definePlugin, defineRoute, jsonBody, plainObject, reply, singleQueryParam } from "../../src/index.ts";
import { defaultPlugins, startTestKit, type TestKit } from "../support/test-kit.ts";

const echoPlugin = definePlugin({
  name: "echo",
  routes: () => [
    defineRoute({
      method: "POST",
      path: "/v1/echo",
      auth: { kind: "api", anyOfScopes: ["subscriptions:write"] },
      body: jsonBody(v.object({ user: plainObject({ phone: v.string() }), count: v.optional(v.number()) })),
      handler: ({ body }) => reply.json(200, body),
    }),
    defineRoute({
      method: "GET",
      path: "/v1/search",
      auth: { kind: "api" },
      query: v.object({ phone: singleQueryParam(), email: singleQueryParam() }),
      handler: ({ query }) => reply.json(200, query),
    }),
    defineRoute({ method: "POST", path: "/1/legacy-echo", auth: { kind: "legacy" }, handler: () => reply.json(200, { ok: true }) }),
  ],
});

describe("HTTP error model", () => {
  let t: TestKit;
  before(async () => {
    t = await startTestKit({ plugins: [...defaultPlugins(), echoPlugin], config: { rateLimits: { default: 1000 } } });
  });
  after(() => t.stop());

  async function expectError(response: Awaited<ReturnType<TestKit["request"]>>, status: number, code: string) {
    assert.equal(response.status, status, response.body);
    assert.equal(response.headers["content-type"], "application/json");
    const body = t.json(response);
    assert.equal(body.error.code, code);
    assert.equal(body.error.id, response.headers["x-trace-id"]);
    assert.equal(typeof body.error.message, "string");
    return body.error;
  }

  it("answers malformed JSON with 400 invalid_json and keeps serving", async () => {
    await expectError(await t.request({ method: "POST", url: "/v1/echo", body: '{"user": ', headers: { "content-type": "application/json" } }), 400, "invalid_json");
    assert.equal((await t.request({ method: "POST", url: "/v1/echo", body: { user: { phone: "+1" } } })).status, 200);
  });

  it("names the offending field of a body of the wrong shape", async () => {
    const arrayBody = await expectError(await t.request({ method: "POST", url: "/v1/echo", body: [1, 2] }), 400, "invalid_request");
    assert.deepEqual(arrayBody.details.map((d: { path: string }) => d.path), ["body"]);
    const wrongType = await expectError(await t.request({ method: "POST", url: "/v1/echo", body: { user: { phone: 5 }, count: "x" } }), 400, "invalid_request");
    assert.deepEqual(wrongType.details.map((d: { path: string }) => d.path).sort(), ["count", "user.phone"]);
    const nestedArray = await expectError(await t.request({ method: "POST", url: "/v1/echo", body: { user: ["+1"] } }), 400, "invalid_request");
    assert.deepEqual(nestedArray.details.map((d: { path: string }) => d.path), ["user"]);
  });

  it("ignores unknown fields", async () => {
    const response = await t.request({ method: "POST", url: "/v1/echo", body: { user: { phone: "+1", extra: 1 }, occurredAt: "now" } });
    assert.equal(response.status, 200);
    assert.deepEqual(t.json(response), { user: { phone: "+1" } });
  });

  it("refuses a 2 MiB body with 413 and a non-JSON content type with 415", async () => {
    const big = JSON.stringify({ user: { phone: "x".repeat(2 * 1024 * 1024) } });
    await expectError(await t.request({ method: "POST", url: "/v1/echo", body: big, headers: { "content-type": "application/json" } }), 413, "payload_too_large");
    await expectError(await t.request({ method: "POST", url: "/v1/echo", body: "user=1", headers: { "content-type": "text/plain" } }), 415, "unsupported_media_type");
    await expectError(await t.request({ method: "POST", url: "/v1/echo", body: Buffer.from([0xff, 0xfe]), headers: { "content-type": "application/json" } }), 400, "invalid_encoding");
  });

  it("answers 401 for a missing, garbled or unknown bearer token", async () => {
    await expectError(await t.request({ url: "/v1/search?phone=1", token: null }), 401, "unauthorized");
    for (const authorization of ["Basic dXNlcjpwYXNz", "Bearer", "Bearer a b", "Bearer \u00e9t\u00e9", `Bearer ${"x".repeat(600)}`, "token"]) {
      await expectError(await t.request({ url: "/v1/search", token: null, headers: { authorization } }), 401, "unauthorized");
    }
    await expectError(await t.request({ url: "/v1/search", token: "rk_key_unknown" }), 401, "unauthorized");
    await expectError(await t.request({ url: "/v1/search", token: null, headers: { authorization: [`Bearer ${t.company.apiKey}`, "Bearer x"] } }), 401, "unauthorized");
  });

  it("accepts the scheme in any case", async () => {
    assert.equal((await t.request({ url: "/v1/search", token: null, headers: { authorization: `bearer ${t.company.apiKey}` } })).status, 200);
  });

  it("answers 401 for a revoked token and for a token of a deleted company", async () => {
    const accounts = t.kit.plugin("accounts");
    const [application] = await accounts.listApplications(t.company.companyId);
    const issued = await accounts.issueCredential({ companyId: t.company.companyId, kind: "api_key", applicationId: application!.id });
    assert.equal((await t.request({ url: "/v1/search", token: issued.token })).status, 200);
    await accounts.revokeCredential(issued.credential.id);
    await expectError(await t.request({ url: "/v1/search", token: issued.token }), 401, "unauthorized");

    const other = await t.kit.provisionCompany({ name: "Gone" });
    assert.equal((await t.request({ url: "/v1/search", token: other.output.apiKey as string })).status, 200);
    await accounts.deleteCompany(other.company.id);
    await expectError(await t.request({ url: "/v1/search", token: other.output.apiKey as string }), 401, "unauthorized");
    await expectError(await t.request({ method: "POST", url: "/1/legacy-echo", token: other.output.legacyToken as string }), 401, "unauthorized");
  });

  it("answers 403 when the token lacks the route's scope", async () => {
    const accounts = t.kit.plugin("accounts");
    const readOnly = await accounts.createApplication({ companyId: t.company.companyId, name: "reader", scopes: ["subscriptions:read"] });
    const issued = await accounts.issueCredential({ companyId: t.company.companyId, kind: "api_key", applicationId: readOnly.id });
    const error = await expectError(await t.request({ method: "POST", url: "/v1/echo", token: issued.token, body: { user: { phone: "+1" } } }), 403, "forbidden");
    assert.match(error.message, /subscriptions:write/);
  });

  it("keeps v1 tokens off legacy routes and legacy tokens off v1 routes", async () => {
    await expectError(await t.request({ method: "POST", url: "/1/legacy-echo" }), 401, "unauthorized");
    await expectError(await t.request({ url: "/v1/search", token: t.company.legacyToken }), 401, "unauthorized");
    assert.equal((await t.request({ method: "POST", url: "/1/legacy-echo", token: t.company.legacyToken })).status, 200);
  });

  it("answers 404 for an unknown path and 405 with Allow for a wrong method", async () => {
    await expectError(await t.request({ url: "/v1/nothing-here" }), 404, "not_found");
    await expectError(await t.request({ url: "/%E0%A4%A" }), 404, "not_found");
    const wrong = await expectError(await t.request({ method: "DELETE", url: "/v1/echo" }), 405, "method_not_allowed");
    assert.match(wrong.message, /DELETE/);
    assert.equal((await t.request({ method: "DELETE", url: "/v1/echo" })).headers.allow, "POST");
  });

  it("refuses a repeated query parameter and treats an empty one as absent", async () => {
    const repeated = await expectError(await t.request({ url: "/v1/search?phone=%2B1&phone=%2B2" }), 400, "invalid_request");
    assert.deepEqual(repeated.details.map((d: { path: string }) => d.path), ["phone"]);
    const empty = await t.request({ url: "/v1/search?phone=&email=a%40b.c" });
    assert.equal(empty.status, 200);
    assert.deepEqual(t.json(empty), { email: "a@b.c" });
    assert.deepEqual(t.json(await t.request({ url: "/v1/search?phone=%2B15555550100" })), { phone: "+15555550100" });
  });

  it("puts x-trace-id on every response and reuses a well-formed incoming one", async () => {
    for (const request of [{ url: "/v1/search" }, { url: "/nope" }, { url: "/v1/search", token: null }]) {
      assert.match((await t.request(request)).headers["x-trace-id"] ?? "", /^[0-9a-f-]{36}$/);
    }
    const traced = await t.request({ url: "/v1/search", headers: { "x-trace-id": "trace-abc-123" } });
    assert.equal(traced.headers["x-trace-id"], "trace-abc-123");
  });
});

describe("rate limits", () => {
  it("limits per token and route class, with headers, 429 and Retry-After, and resets each second", async () => {
    const t = await startTestKit({ plugins: [...defaultPlugins(), echoPlugin], config: { rateLimits: { default: 2 } } });
    const first = await t.request({ url: "/v1/search" });
    assert.equal(first.headers["x-ratelimit-limit"], "2");
    assert.equal(first.headers["x-ratelimit-remaining"], "1");
    assert.equal((await t.request({ url: "/v1/search" })).headers["x-ratelimit-remaining"], "0");
    const limited = await t.request({ url: "/v1/search" });
    assert.equal(limited.status, 429);
    assert.equal(t.json(limited).error.code, "rate_limited");
    assert.equal(limited.headers["retry-after"], "1");
    const other = await t.kit.provisionCompany({ name: "Other" });
    assert.equal((await t.request({ url: "/v1/search", token: other.output.apiKey as string })).status, 200, "another token has its own budget");
    t.clock.advance(1000);
    assert.equal((await t.request({ url: "/v1/search" })).status, 200);
    await t.stop();
  });

  it("counts nothing and sends no rate-limit headers for a class configured without a limit", async () => {
    const t = await startTestKit({ plugins: [...defaultPlugins(), echoPlugin], config: { rateLimits: { default: Infinity } } });
    for (let i = 0; i < 200; i++) {
      const response = await t.request({ url: "/v1/search" });
      assert.equal(response.status, 200);
      assert.equal(response.headers["x-ratelimit-limit"], undefined);
      assert.equal(response.headers["x-ratelimit-remaining"], undefined);
    }
    await t.stop();
  });

  it("applies the wire-compat defaults per route class", async () => {
    const t = await startTestKit({ plugins: [...defaultPlugins(), echoPlugin] });
    assert.equal((await t.request({ url: "/v1/search" })).headers["x-ratelimit-limit"], "150");
    assert.deepEqual(t.kit.config.rateLimits, { default: 150, "opt-in": 10, unsubscribe: 5, "catalog-upload": 1, identity: 10 });
    await t.stop();
  });
});
