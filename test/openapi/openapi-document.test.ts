import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, describe, it } from "node:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import express from "express";
import { fakeClock } from "../../adapters/clock/index.ts";
import { expressRouter } from "../../adapters/http/express/index.ts";
import { manualScheduler } from "../../adapters/scheduler/manual/index.ts";
import { memoryStorage } from "../../adapters/storage/memory/index.ts";
import { serverPlugins } from "../../server/server-kit.ts";
import { createReachkit, silentLogger } from "../../src/index.ts";
import { openApiPath } from "../../src/openapi/openapi-document.ts";
import { listening } from "../support/http-hosts.ts";
import { startServerPluginsKit } from "../support/openapi-kit.ts";
import { startTestKit, TEST_SECRET, type Json, type TestKit } from "../support/test-kit.ts";

/** The reference service's operations that reachkit serves, by operationId (reference-api.md §1). */
const REFERENCE_OPERATIONS = [
  ["getMe", "get", "/v1/me"],
  ["createTokenViaAuthorizationCode", "post", "/v1/authorization-codes/tokens"],
  ["addSubscriptions", "post", "/v1/subscriptions"],
  ["getSubscriptions", "get", "/v1/subscriptions"],
  ["unsubscribeSubscriptions", "post", "/v1/subscriptions/unsubscribe"],
  ["postUpload", "post", "/v1/product-catalog/uploads"],
  ["getUploads", "get", "/v1/product-catalog/uploads"],
  ["lookupUpload", "get", "/v1/product-catalog/uploads/{uploadId}"],
  ["addDeleteRequest", "post", "/v1/privacy/delete-request"],
  ["getDeleteRequest", "get", "/v1/privacy/delete-request/{id}"],
  ["postCustomEvents", "post", "/v1/events/custom"],
  ["postProductViewEvents", "post", "/v1/events/ecommerce/product-view"],
  ["postAddToCartEvents", "post", "/v1/events/ecommerce/add-to-cart"],
  ["postPurchaseEvents", "post", "/v1/events/ecommerce/purchase"],
  ["postCustomAttributes", "post", "/v1/attributes/custom"],
  ["getCustomAttributes", "get", "/v1/attributes/custom"],
  ["identify", "post", "/v1/identity-resolution/user-identifiers"],
] as const;

const METHODS = ["get", "post", "put", "patch", "delete"];

function operations(document: Json): Array<{ method: string; path: string; operation: Json }> {
  return Object.entries(document.paths as Record<string, Json>).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({ method, path, operation: item[method] })),
  );
}

describe("the OpenAPI document", () => {
  let t: TestKit;
  let document: Json;

  before(async () => {
    t = await startTestKit({ plugins: serverPlugins() });
    const response = await t.request({ url: "/openapi.json", token: null });
    assert.equal(response.status, 200);
    assert.equal(response.headers["content-type"], "application/json");
    document = response.json();
  });
  after(() => t.stop());

  it("is a valid OpenAPI 3.1 document", async () => {
    const result = await new Validator().validate(document);
    assert.equal(document.openapi, "3.1.0");
    assert.ok(result.valid, JSON.stringify(result.errors, null, 2));
  });

  it("has every route of the kit's route table, and nothing else", () => {
    const documented = operations(document).map(({ method, path }) => `${method.toUpperCase()} ${path}`);
    const table = t.kit.http.routes.map((route) => `${route.method} ${openApiPath(route.path)}`);
    assert.deepEqual([...documented].sort(), [...table].sort());
    assert.ok(table.includes("GET /openapi.json") && table.includes("PUT /uploads/{key}"));
  });

  it("names the reference service's operations with its operationIds, and every operationId once", () => {
    for (const [operationId, method, path] of REFERENCE_OPERATIONS) assert.equal(document.paths[path]?.[method]?.operationId, operationId, `${method} ${path}`);
    const ids = operations(document).map(({ operation }) => operation.operationId);
    assert.equal(new Set(ids).size, ids.length);
  });

  it("gives every operation a summary, a success answer and an example request (every required parameter, every body)", () => {
    for (const { method, path, operation } of operations(document)) {
      const where = `${method} ${path}`;
      assert.ok(operation.summary, `${where}: summary`);
      assert.ok(Object.keys(operation.responses).some((status) => Number(status) < 400), `${where}: a success answer`);
      for (const parameter of operation.parameters ?? []) {
        if (parameter.required) assert.ok(parameter.example !== undefined, `${where}: example of ${parameter.name}`);
      }
      const content = operation.requestBody?.content;
      if (content) for (const [type, media] of Object.entries(content as Record<string, Json>)) assert.ok(media.example !== undefined, `${where}: example of its ${type} body`);
    }
  });

  it("says how each route authenticates and which scopes it needs", () => {
    const schemes = document.components.securitySchemes;
    assert.equal(schemes.ApiKey.scheme, "bearer");
    assert.equal(schemes.LegacyToken.scheme, "bearer");
    assert.equal(schemes.DashboardSession.in, "cookie");
    assert.equal(schemes.OAuthFlow.type, "oauth2");
    assert.deepEqual(Object.keys(schemes.OAuthFlow.flows.authorizationCode.scopes).sort(), ["attributes:write", "campaigns:read", "campaigns:write", "ecommerce:write", "events:write", "identity:write", "journeys:read", "journeys:write", "privacy_requests:read", "privacy_requests:write", "product_catalogs:read", "product_catalogs:write", "segments:read", "segments:write", "subscriptions:read", "subscriptions:write", "webhooks:write"]);
    assert.deepEqual(document.paths["/v1/subscriptions"].post.security, [{ ApiKey: ["subscriptions:write"] }, { OAuthFlow: ["subscriptions:write"] }]);
    // The reference's specifications disagree on the read's scope: either works.
    assert.deepEqual(document.paths["/v1/subscriptions"].get.security, [
      { ApiKey: ["subscriptions:read"] },
      { ApiKey: ["subscriptions:write"] },
      { OAuthFlow: ["subscriptions:read"] },
      { OAuthFlow: ["subscriptions:write"] },
    ]);
    assert.deepEqual(document.paths["/v1/me"].get.security, [{ ApiKey: [] }, { OAuthFlow: [] }]);
    assert.deepEqual(document.paths["/1/messages"].post.security, [{ LegacyToken: [] }]);
    assert.deepEqual(document.paths["/integrations/oauth-install"].post.security, [{ DashboardSession: [] }]);
    assert.deepEqual(document.paths["/openapi.json"].get.security, []);
  });

  it("documents the JSON error, 429 with Retry-After, and the route's own statuses", () => {
    const error = document.components.schemas.Error;
    assert.deepEqual(error.required, ["error"]);
    assert.deepEqual(error.properties.error.required, ["id", "code", "message"]);
    const optIn = document.paths["/v1/subscriptions"].post.responses;
    assert.deepEqual(Object.keys(optIn), ["202", "400", "401", "403", "413", "415", "429"]);
    assert.equal(optIn["400"].content["application/json"].schema.$ref, "#/components/schemas/Error");
    assert.ok(optIn["429"].headers["retry-after"]);
    assert.deepEqual(Object.keys(document.paths["/1/subscribers/unsubscribe"].post.responses), ["200", "400", "401", "409", "413", "415", "429"]);
    // The archived endpoints answer a bad token with 403, not 401.
    assert.deepEqual(Object.keys(document.paths["/v1/messages"].post.responses), ["200", "403", "404", "400", "413", "415", "429"].sort());
    assert.equal(document.paths["/v1/authorization-codes/tokens"].post.responses["400"].content["application/json"].schema.properties.error.enum[0], "invalid_request");
  });

  it("shows the request schemas the services check, and the answers' schemas", () => {
    const optIn = document.paths["/v1/subscriptions"].post;
    const body = optIn.requestBody.content["application/json"].schema;
    assert.deepEqual(body.required, ["user"]);
    assert.equal(body.properties.user.properties.phone.pattern, "^\\+[1-9]\\d{6,14}$");
    assert.deepEqual(body.properties.subscriptionType.enum, ["MARKETING", "TRANSACTIONAL", "CHECKOUT_ABANDONED"]);
    const accepted = optIn.responses["202"].content["application/json"].schema;
    assert.deepEqual(accepted.properties.subscriptionResponses.items.properties.subscriptionCreationStatus.enum, ["NEWLY_CREATED", "PREVIOUSLY_CREATED"]);
    assert.equal(document.paths["/v1/product-catalog/uploads"].post.requestBody.required, false);
    assert.deepEqual(
      document.paths["/v1/subscriptions"].get.parameters.map((parameter: Json) => [parameter.name, parameter.in]),
      [
        ["phone", "query"],
        ["email", "query"],
      ],
    );
  });

  it("puts the routes of the other hosts on their servers", () => {
    assert.deepEqual(document.servers, [{ url: "http://localhost:3000", description: "The main host ({base_url}): /v1 and /1 paths" }]);
    assert.equal(document.paths["/events/reminders"].servers[0].description, "The appointments and legacy privacy host ({tactical_url})");
    assert.equal(document.paths["/v1/messages"].servers[0].description, "The archived messages host ({messages_url})");
  });
});

describe("the OpenAPI document under a mount prefix", () => {
  it("names the prefixed public URLs as servers, so a client reaches each route through them", async () => {
    const app = express();
    const host = await listening(createServer(app));
    const kit = await startServerPluginsKit({ api: `${host.url}/reachkit`, tactical: `${host.url}/reachkit-tactical` });
    app.use(expressRouter(kit, { prefix: "/reachkit" }));
    try {
      const { output } = await kit.provisionCompany({ name: "Acme" });
      const document = (await (await fetch(`${host.url}/reachkit/openapi.json`)).json()) as Json;
      assert.deepEqual(document.servers.map((server: Json) => server.url), [`${host.url}/reachkit`]);
      assert.deepEqual(document.paths["/events/reminders"].servers.map((server: Json) => server.url), [`${host.url}/reachkit-tactical`]);
      assert.equal(document.components.securitySchemes.OAuthFlow.flows.authorizationCode.tokenUrl, `${host.url}/reachkit/v1/authorization-codes/tokens`);
      const me = await fetch(`${document.servers[0].url}/v1/me`, { headers: { authorization: `Bearer ${output.apiKey}` } });
      assert.equal(me.status, 200);

      for (const pagePath of ["/reachkit/docs", "/reachkit/docs/"]) {
        const page = await fetch(`${host.url}${pagePath}`);
        assert.equal(page.status, 200);
        const html = await page.text();
        const links = [...html.matchAll(/(?:href|src|data-spec)="([^"]+)"/g)].map((match) => new URL(match[1]!, `${host.url}${pagePath}`).pathname);
        assert.deepEqual(links, [
          "/reachkit/docs/assets/swagger-ui.css",
          "/reachkit/docs/assets/favicon-32x32.png",
          "/reachkit/openapi.json",
          "/reachkit/docs/assets/swagger-ui-bundle.js",
          "/reachkit/docs/assets/reference.js",
        ]);
        for (const link of links) assert.equal((await fetch(`${host.url}${link}`)).status, 200, link);
      }
    } finally {
      await kit.stop();
      await host.close();
    }
  });
});

describe("the API reference switch", () => {
  it("serves neither /openapi.json nor /docs when apiReference is false", async () => {
    const clock = fakeClock("2026-03-01T12:00:00.000Z");
    const kit = createReachkit({ storage: memoryStorage(), scheduler: manualScheduler(clock), clock, logger: silentLogger(), secret: TEST_SECRET, apiReference: false });
    await kit.start();
    try {
      assert.equal((await kit.inject({ url: "/openapi.json" })).status, 404);
      assert.equal((await kit.inject({ url: "/docs" })).status, 404);
    } finally {
      await kit.stop();
    }
  });
});
