import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, describe, it } from "node:test";
import express from "express";
import Fastify from "fastify";
import { expressRouter } from "../../../adapters/http/express/index.ts";
import { fastifyPlugin } from "../../../adapters/http/fastify/index.ts";
import { fetchHandler } from "../../../adapters/http/fetch/index.ts";
import { nodeHandler } from "../../../adapters/http/node/index.ts";
import { definePlugin, defineRoute, reply, type Reachkit } from "../../../src/index.ts";
import type { MountedHost } from "../../../src/testkit/index.ts";
import { fetchBridgeServer } from "../../support/fetch-bridge.ts";
import { listening } from "../../support/http-hosts.ts";
import { startTestKit, type TestKit } from "../../support/test-kit.ts";

// Declared broadest first: a first-match router (Express) must still pick what find-my-way picks.
const routingPlugin = definePlugin({
  name: "routing",
  routes: () => [
    defineRoute({ method: "GET", path: "/files/*", auth: { kind: "none" }, handler: ({ params }) => reply.json(200, { route: "file", rest: params["*"] }) }),
    defineRoute({ method: "GET", path: "/things/:id", auth: { kind: "none" }, handler: ({ params }) => reply.json(200, { route: "thing", id: params.id }) }),
    defineRoute({ method: "GET", path: "/things/special", auth: { kind: "none" }, handler: () => reply.json(200, { route: "special" }) }),
    defineRoute({ method: "POST", path: "/things/:id/notes", auth: { kind: "none" }, handler: ({ params }) => reply.json(200, { route: "notes", id: params.id }) }),
    // The same path as GET /things/:id to a router, with another parameter name.
    defineRoute({ method: "PUT", path: "/things/:key", auth: { kind: "none" }, handler: ({ params }) => reply.json(200, { route: "put", key: params.key }) }),
    defineRoute({ method: "GET", path: "/range/:from-:to", auth: { kind: "none" }, handler: ({ params }) => reply.json(200, { from: params.from, to: params.to }) }),
    defineRoute({ method: "GET", path: "/odd(chars)+here", auth: { kind: "none" }, handler: () => reply.json(200, { route: "odd" }) }),
  ],
});

const NOT_FOUND = { status: 404, body: { host: "not found" } };

async function hosts(kit: Reachkit): Promise<Record<string, MountedHost>> {
  const node = nodeHandler(kit);
  const nodeHost = await listening(
    createServer((request, response) =>
      node(request, response, () => {
        response.writeHead(404, { "content-type": "application/json" });
        response.end(JSON.stringify(NOT_FOUND.body));
      }),
    ),
  );
  const app = express();
  app.use(expressRouter(kit));
  app.use((_request, response) => void response.status(404).json(NOT_FOUND.body));
  const expressHost = await listening(createServer(app));
  const fastify = Fastify();
  await fastify.register(fastifyPlugin(kit));
  fastify.setNotFoundHandler((_request, replyTo) => replyTo.code(404).send(NOT_FOUND.body));
  const fastifyUrl = await fastify.listen({ port: 0, host: "127.0.0.1" });
  const fetch = fetchHandler(kit);
  const fetchHost = await listening(fetchBridgeServer((request) => fetch(request, () => Response.json(NOT_FOUND.body, { status: 404 }))));
  return { node: nodeHost, express: expressHost, fastify: { url: fastifyUrl, close: () => fastify.close() }, fetch: fetchHost };
}

describe("routing through every HTTP adapter", () => {
  let t: TestKit;
  let served: Record<string, MountedHost>;
  before(async () => {
    t = await startTestKit({ plugins: [routingPlugin], bare: true });
    served = await hosts(t.kit);
  });
  after(async () => {
    for (const host of Object.values(served)) await host.close();
    await t.stop();
  });

  const cases: Array<[method: string, path: string, expected: { status: number; body: unknown }]> = [
    ["GET", "/things/special", { status: 200, body: { route: "special" } }],
    ["GET", "/things/other", { status: 200, body: { route: "thing", id: "other" } }],
    ["GET", "/things/a%2Fb%2B%20c", { status: 200, body: { route: "thing", id: "a/b+ c" } }],
    ["POST", "/things/special/notes", { status: 200, body: { route: "notes", id: "special" } }],
    ["GET", "/files/a/b%20c/d", { status: 200, body: { route: "file", rest: "a/b c/d" } }],
    ["PUT", "/things/other", { status: 200, body: { route: "put", key: "other" } }],
    ["GET", "/range/3-9", { status: 200, body: { from: "3", to: "9" } }],
    ["GET", "/odd(chars)+here", { status: 200, body: { route: "odd" } }],
    ["GET", "/THINGS/special", NOT_FOUND],
    ["GET", "/nowhere", NOT_FOUND],
  ];

  for (const [method, path, expected] of cases) {
    it(`${method} ${path} answers the same on node, express, fastify and fetch`, async () => {
      for (const [adapter, host] of Object.entries(served)) {
        const answer = await fetch(`${host.url}${path}`, { method });
        assert.deepEqual({ status: answer.status, body: await answer.json() }, expected, adapter);
      }
    });
  }

  it("passes a path it cannot percent-decode to the host, whose framework has the last word", async () => {
    for (const [adapter, host] of Object.entries(served)) {
      const answer = await fetch(`${host.url}/things/%E0%A4%A`);
      // Fastify refuses such a URL itself, before any route or 404 handler (its frameworkErrors option).
      const expected = adapter === "fastify" ? 400 : 404;
      assert.equal(answer.status, expected, adapter);
    }
  });

  it("answers a method no route serves with the core's 405 and its Allow header on every adapter", async () => {
    for (const [adapter, host] of Object.entries(served)) {
      const answer = await fetch(`${host.url}/things/special`, { method: "DELETE" });
      assert.equal(answer.status, 405, adapter);
      assert.equal(answer.headers.get("allow"), "GET, PUT", adapter);
      assert.equal(((await answer.json()) as { error: { code: string } }).error.code, "method_not_allowed", adapter);
    }
  });
});
