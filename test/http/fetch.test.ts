import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { fetchHandler } from "../../adapters/http/fetch/index.ts";
import { CONFORMANCE_CONFIG, conformancePlugin } from "../../src/testkit/index.ts";
import { defaultPlugins, startTestKit, type TestKit } from "../support/test-kit.ts";

describe("kit.fetch and fetchHandler", () => {
  let t: TestKit;
  before(async () => {
    t = await startTestKit({ plugins: [...defaultPlugins(), conformancePlugin()], config: CONFORMANCE_CONFIG });
  });
  after(() => t.stop());
  const auth = () => ({ authorization: `Bearer ${t.company.apiKey}` });

  it("answers a fetch Request with a Response, leaving the globals alone", async () => {
    const globalFetch = globalThis.fetch;
    const me = await t.kit.fetch(new Request("http://shop.example/v1/me", { headers: auth() }));
    assert.equal(me.status, 200);
    assert.equal(me.headers.get("content-type"), "application/json");
    assert.equal(((await me.json()) as { companyName: string }).companyName, "Acme");
    assert.equal(globalThis.fetch, globalFetch);
    const missing = await t.kit.fetch(new Request("http://shop.example/nowhere"));
    assert.equal(missing.status, 404);
    assert.equal(((await missing.json()) as { error: { code: string } }).error.code, "not_found");
  });

  it("reads the Request body as a stream and sends repeated headers, no body for HEAD or 204", async () => {
    const echo = await t.kit.fetch(
      new Request("http://shop.example/conformance/json", { method: "POST", headers: { ...auth(), "content-type": "application/json" }, body: '{"name":"a"}' }),
    );
    assert.deepEqual(await echo.json(), { received: { name: "a" } });
    const cookies = await t.kit.fetch(new Request("http://shop.example/conformance/headers"));
    assert.deepEqual(cookies.headers.getSetCookie(), ["first=1; Path=/", "second=2; Path=/"]);
    const head = await t.kit.fetch(new Request("http://shop.example/v1/me", { method: "HEAD", headers: auth() }));
    assert.equal(head.status, 200);
    assert.equal(head.body, null);
    const deleted = await t.kit.fetch(new Request("http://shop.example/conformance/headers", { method: "DELETE" }));
    assert.equal(deleted.status, 204);
  });

  it("serves under a prefix and hands what it does not serve to next", async () => {
    const handler = fetchHandler(t.kit, { prefix: "/reachkit/" });
    const host = () => new Response("host", { status: 299 });
    assert.equal((await handler(new Request("http://shop.example/reachkit/v1/me", { headers: auth() }), host)).status, 200);
    assert.equal((await handler(new Request("http://shop.example/v1/me"), host)).status, 299);
    assert.equal((await handler(new Request("http://shop.example/reachkit/nowhere"), host)).status, 299);
    assert.equal((await handler(new Request("http://shop.example/reachkit/v1/me", { method: "POST" }), host)).status, 405);
    assert.equal((await handler(new Request("http://shop.example/elsewhere"))).status, 404);
    const messagesOnly = fetchHandler(t.kit, { groups: ["messages"] });
    assert.equal((await messagesOnly(new Request("http://shop.example/v1/me", { headers: auth() }))).status, 404);
    assert.equal((await messagesOnly(new Request("http://shop.example/conformance/group"))).status, 200);
  });
});
