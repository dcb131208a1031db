import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, describe, it } from "node:test";
import express, { type ErrorRequestHandler } from "express";
import { expressRouter } from "../../../adapters/http/express/index.ts";
import { expressPath } from "../../../adapters/http/express/express-path.ts";
import { CONFORMANCE_CONFIG, conformancePlugin, type MountedHost } from "../../../src/testkit/index.ts";
import { listening } from "../../support/http-hosts.ts";
import { defaultPlugins, startTestKit, type TestKit } from "../../support/test-kit.ts";

describe("expressPath", () => {
  it("turns find-my-way paths into Express 5 paths", () => {
    assert.equal(expressPath("/v1/privacy/delete-request/:id"), "/v1/privacy/delete-request/:id");
    assert.equal(expressPath("/range/:from-:to"), "/range/:from-:to");
    assert.equal(expressPath("/files/*"), "/files/{*reachkit_wildcard}");
    assert.equal(expressPath("/odd(chars)+here?!"), "/odd\\(chars\\)\\+here\\?\\!");
    assert.equal(expressPath("/ns::name"), "/ns\\:name");
  });

  it("refuses, naming the path, what Express 5 cannot express", () => {
    assert.throws(() => expressPath("/items/:id(^\\d+$)"), /\/items\/:id.*regular-expression/);
    assert.throws(() => expressPath("/files/*/tail"), /wildcard must end/);
    assert.throws(() => expressPath("/items/:/x"), /needs a name/);
  });
});

describe("expressRouter in a host app", () => {
  let t: TestKit;
  let host: MountedHost;
  const hostErrors: string[] = [];
  before(async () => {
    t = await startTestKit({ plugins: [...defaultPlugins(), conformancePlugin()], config: CONFORMANCE_CONFIG });
    const app = express();
    app.use("/broken", (_request, _response, next) => next(new Error("the host's own failure")));
    app.use("/mounted", expressRouter(t.kit));
    app.use(expressRouter(t.kit, { prefix: "/reachkit" }));
    const onError: ErrorRequestHandler = (error: Error, _request, response, _next) => {
      hostErrors.push(error.message);
      response.status(418).json({ hostError: error.message });
    };
    app.use(onError);
    host = await listening(createServer(app));
  });
  after(async () => {
    await host.close();
    await t.stop();
  });

  it("works mounted with app.use(path, router): the path reachkit sees is relative to the mount", async () => {
    const answer = await fetch(`${host.url}/mounted/conformance/params/a/and/b?x=1`);
    assert.equal(answer.status, 200);
    assert.deepEqual(await answer.json(), { params: { first: "a", second: "b" }, query: { x: "1" }, path: "/conformance/params/a/and/b" });
  });

  it("answers its own errors itself and leaves the host's errors to the host's error handler", async () => {
    const unauthorized = await fetch(`${host.url}/reachkit/v1/me`);
    assert.equal(unauthorized.status, 401);
    assert.equal(((await unauthorized.json()) as { error: { code: string } }).error.code, "unauthorized");
    const tooLarge = await fetch(`${host.url}/reachkit/conformance/json`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.company.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "x".repeat(100_000) }),
    });
    assert.equal(tooLarge.status, 413);
    assert.deepEqual(hostErrors, []);

    const broken = await fetch(`${host.url}/broken/v1/me`);
    assert.equal(broken.status, 418);
    assert.deepEqual(await broken.json(), { hostError: "the host's own failure" });
    assert.deepEqual(hostErrors, ["the host's own failure"]);
  });

  it("treats routes case-sensitively and a trailing slash as absent, as the core router does", async () => {
    const headers = { authorization: `Bearer ${t.company.apiKey}` };
    assert.equal((await fetch(`${host.url}/reachkit/v1/me/`, { headers })).status, 200);
    assert.equal((await fetch(`${host.url}/reachkit/V1/ME`, { headers })).status, 404);
  });
});
