import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { AddressInfo } from "node:net";
import Fastify from "fastify";
import { fastifyPlugin } from "../../../adapters/http/fastify/index.ts";
import { CONFORMANCE_CONFIG, conformancePlugin } from "../../../src/testkit/index.ts";
import { sendBodyInParts } from "../../support/slow-body-client.ts";
import { defaultPlugins, startTestKit, type TestKit } from "../../support/test-kit.ts";

describe("fastifyPlugin in a host instance", () => {
  let t: TestKit;
  before(async () => {
    t = await startTestKit({ plugins: [...defaultPlugins(), conformancePlugin()], config: CONFORMANCE_CONFIG });
  });
  after(() => t.stop());

  it("keeps its parsers in its scope and runs the host's hooks on its routes", async () => {
    const app = Fastify();
    app.addHook("onRequest", async (_request, reply) => void reply.header("x-host-hook", "ran"));
    // A host-wide JSON parser that refuses everything: reachkit's routes must not see it.
    app.removeContentTypeParser("application/json");
    app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, _body, done) => done(new Error("host parser"), undefined));
    await app.register(fastifyPlugin(t.kit));
    app.post("/host/text", async (request) => ({ host: request.body }));

    const echo = await app.inject({
      method: "POST",
      url: "/conformance/json",
      headers: { authorization: `Bearer ${t.company.apiKey}`, "content-type": "application/json" },
      payload: '{"name":"a"}',
    });
    assert.equal(echo.statusCode, 200, echo.body);
    assert.deepEqual(echo.json(), { received: { name: "a" } });
    assert.equal(echo.headers["x-host-hook"], "ran");
    assert.equal(echo.headers["content-type"], "application/json");

    // The host's routes keep Fastify's own text parser, not reachkit's stream pass-through.
    const text = await app.inject({ method: "POST", url: "/host/text", headers: { "content-type": "text/plain" }, payload: "plain" });
    assert.deepEqual(text.json(), { host: "plain" });
    await app.close();
  });

  it("serves under its prefix inside the prefix it is registered with, and reachkit sees the path relative to both", async () => {
    const app = Fastify();
    await app.register(fastifyPlugin(t.kit, { prefix: "/inner" }), { prefix: "/outer" });
    const answer = await app.inject({ method: "GET", url: "/outer/inner/conformance/params/a/and/b?x=1" });
    assert.equal(answer.statusCode, 200, answer.body);
    assert.deepEqual(answer.json(), { params: { first: "a", second: "b" }, query: { x: "1" }, path: "/conformance/params/a/and/b" });
    assert.equal((await app.inject({ method: "GET", url: "/inner/conformance/params/a/and/b" })).statusCode, 404);
    await app.close();
  });

  it("follows the host's router options, such as trailing slashes", async () => {
    const headers = { authorization: `Bearer ${t.company.apiKey}` };
    const strict = Fastify();
    await strict.register(fastifyPlugin(t.kit));
    assert.equal((await strict.inject({ url: "/v1/me/", headers })).statusCode, 404);
    await strict.close();
    const lenient = Fastify({ routerOptions: { ignoreTrailingSlash: true } });
    await lenient.register(fastifyPlugin(t.kit));
    assert.equal((await lenient.inject({ url: "/v1/me/", headers })).statusCode, 200);
    await lenient.close();
  });

  it("answers a request whose body no route read, over a connection the client then closes, without losing the answer", async () => {
    const app = Fastify();
    await app.register(fastifyPlugin(t.kit));
    await app.listen({ port: 0, host: "127.0.0.1" });
    try {
      const port = (app.server.address() as AddressInfo).port;
      const expected = await app.inject({ method: "GET", url: "/openapi.json" });
      assert.equal(expected.statusCode, 200);
      const part = "b".repeat(100_000);
      const answer = await sendBodyInParts({ port, method: "GET", path: "/openapi.json", headers: { connection: "close" }, parts: [part, part, part] });
      assert.equal(answer.status, 200);
      assert.equal(answer.body, expected.body);
    } finally {
      await app.close();
    }
  });
});
