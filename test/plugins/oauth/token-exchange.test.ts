import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { decodeProtectedHeader } from "jose";
import type { InjectResponse } from "../../../src/index.ts";
import {
  authorizedCode,
  exchangeCode,
  InstallClient,
  installPath,
  REDIRECT_URI,
  startOAuthTestKit,
  type OAuthTestKit,
} from "../../support/oauth.ts";

const TWO_MINUTES = 2 * 60 * 1000;

describe("POST /v1/authorization-codes/tokens", () => {
  let t: OAuthTestKit;
  beforeEach(async () => {
    t = await startOAuthTestKit();
  });
  afterEach(() => t.stop());

  const exchange = (code: string | undefined, fields: Record<string, string | undefined> = {}) =>
    exchangeCode(t, { grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, client_id: t.app.clientId, client_secret: t.clientSecret, ...fields });

  function assertOAuthError(response: InjectResponse, error: string, status = 400): void {
    assert.equal(response.status, status, response.body);
    assert.equal(response.headers["content-type"], "application/json");
    assert.equal(response.headers["cache-control"], "no-store");
    const body = response.json<Record<string, unknown>>();
    assert.deepEqual(Object.keys(body).sort(), ["error", "error_description"]);
    assert.equal(body.error, error);
    assert.equal(typeof body.error_description, "string");
  }

  const me = (token: string) => t.request({ url: "/v1/me", token });
  const oauthTokens = () => t.kit.storage.collection<{ id: string; kind: string; revokedAt?: number }>("accounts_credentials").count({ kind: "oauth" });

  it("trades a code for a Bearer access token and an id_token naming the company and the application", async () => {
    const response = await exchange(await authorizedCode(t));
    assert.equal(response.status, 200, response.body);
    assert.equal(response.headers["content-type"], "application/json");
    assert.equal(response.headers["cache-control"], "no-store");
    const body = response.json<{ access_token: string; id_token: string; token_type: string }>();
    assert.deepEqual(Object.keys(body).sort(), ["access_token", "id_token", "token_type"]);
    assert.equal(body.token_type, "Bearer");
    assert.match(body.access_token, /^rk_oat_/);

    assert.deepEqual(decodeProtectedHeader(body.id_token), { alg: "HS256", typ: "JWT" });
    const claims = await t.kit.plugin("oauth").idTokens.verify(body.id_token);
    assert.equal(claims.iss, "http://localhost:3000");
    assert.equal(claims.aud, t.app.clientId);
    assert.equal(claims.sub, t.company.companyId);
    assert.equal(claims.company_id, t.company.companyId);
    assert.equal(claims.company_name, "Acme");
    assert.equal(claims.application_id, t.app.applicationId);
    assert.equal(claims.application_name, "Shop Sync");
    assert.equal(claims.scope, "subscriptions:read subscriptions:write");
    assert.equal(claims.exp! - claims.iat!, 3600);
    const [header, payload, signature] = body.id_token.split(".");
    await assert.rejects(t.kit.plugin("oauth").idTokens.verify(`${header}.${payload}.${signature!.slice(0, -2)}AA`), "a tampered signature fails");

    const identity = await me(body.access_token);
    assert.equal(identity.status, 200);
    assert.deepEqual(t.json(identity), {
      applicationName: "Shop Sync",
      attentiveDomainName: "acme",
      companyName: "Acme",
      contactEmail: "",
      companyId: t.company.companyId,
    });
  });

  it("gives a token that works on v1 routes within its scopes and nowhere else", async () => {
    const client = new InstallClient(t.kit);
    const full = (await exchange(await authorizedCode(t, client))).json<{ access_token: string }>().access_token;
    const reads = await t.request({ url: "/v1/test/subscriptions", token: full });
    assert.equal(reads.status, 200);
    assert.equal(t.json(reads).companyId, t.company.companyId, "acts for the installing company, not the application's owner");
    assert.equal((await t.request({ method: "POST", url: "/v1/test/privacy", token: full, body: {} })).status, 403, "privacy_requests:write was not granted");
    assert.equal((await t.request({ method: "POST", url: "/1/test/legacy", token: full, body: {} })).status, 401, "not a legacy token");

    const writeOnly = (await exchange(await authorizedCode(t, client, ["subscriptions:write"]))).json<{ access_token: string }>().access_token;
    assert.equal((await t.request({ url: "/v1/test/subscriptions", token: writeOnly })).status, 403, "only the consented scopes");
    assert.equal((await me(writeOnly)).status, 200);
  });

  it("keeps one token per installing company and application: a new install replaces the old token", async () => {
    const client = new InstallClient(t.kit);
    const first = (await exchange(await authorizedCode(t, client))).json<{ access_token: string }>().access_token;
    const second = (await exchange(await authorizedCode(t, client))).json<{ access_token: string }>().access_token;
    assert.equal((await me(first)).status, 401);
    assert.equal((await me(second)).status, 200);
    const installs = await t.kit.plugin("oauth").installations.list(t.company.companyId);
    assert.equal(installs.length, 1);
    assert.equal(installs[0]!.applicationId, t.app.applicationId);
  });

  it("refuses a code exchanged twice, and revokes the token issued with it", async () => {
    const code = await authorizedCode(t);
    const token = (await exchange(code)).json<{ access_token: string }>().access_token;
    assert.equal((await me(token)).status, 200);
    assertOAuthError(await exchange(code), "invalid_grant");
    assert.equal((await me(token)).status, 401);
    assert.deepEqual(await t.kit.plugin("oauth").installations.list(t.company.companyId), []);
    assertOAuthError(await exchange(code), "invalid_grant");
    assert.equal(await oauthTokens(), 1, "nothing new was issued");
  });

  it("accepts a code until two minutes have passed, and refuses it from then on", async () => {
    const client = new InstallClient(t.kit);
    const early = await authorizedCode(t, client);
    t.clock.advance(TWO_MINUTES - 1);
    assert.equal((await exchange(early)).status, 200);

    const late = await authorizedCode(t, client);
    t.clock.advance(TWO_MINUTES);
    const refused = await exchange(late);
    assertOAuthError(refused, "invalid_grant");
    assert.match(refused.json<{ error_description: string }>().error_description, /expired/);
    assert.equal(await oauthTokens(), 1);
  });

  it("refuses a wrong client secret, an unknown client or missing credentials with invalid_client, and issues nothing", async () => {
    const code = await authorizedCode(t);
    assertOAuthError(await exchange(code, { client_secret: `${t.clientSecret}x` }), "invalid_client");
    assertOAuthError(await exchange(code, { client_secret: "" }), "invalid_client");
    assertOAuthError(await exchange(code, { client_secret: undefined }), "invalid_client");
    assertOAuthError(await exchange(code, { client_id: "rk_cid_nobody" }), "invalid_client");
    assertOAuthError(await exchange(code, { client_id: undefined }), "invalid_client");
    assert.equal(await oauthTokens(), 0);
    assert.equal((await exchange(code)).status, 200, "the code was not spent by the refusals");
  });

  it("refuses a code exchanged by another client, and issues nothing", async () => {
    const other = await t.kit.plugin("oauth").applications.create({
      companyId: t.company.companyId,
      name: "Other App",
      redirectUris: [REDIRECT_URI],
      scopes: ["subscriptions:read", "subscriptions:write"],
    });
    const code = await authorizedCode(t);
    assertOAuthError(await exchange(code, { client_id: other.application.clientId, client_secret: other.clientSecret }), "invalid_grant");
    assert.equal(await oauthTokens(), 0);
    assert.equal((await exchange(code)).status, 200);
  });

  it("refuses a redirect_uri that differs from the code's in one character, in case, or by an added query", async () => {
    const code = await authorizedCode(t);
    for (const redirectUri of [REDIRECT_URI.replace("callback", "callbacc"), REDIRECT_URI.toUpperCase(), `${REDIRECT_URI}?x=1`, undefined]) {
      const response = await exchange(code, { redirect_uri: redirectUri });
      assertOAuthError(response, redirectUri === undefined ? "invalid_request" : "invalid_grant");
    }
    assert.equal(await oauthTokens(), 0);
  });

  it("answers malformed requests in the OAuth shape, never with the kit's error or a 500", async () => {
    const code = await authorizedCode(t);
    assertOAuthError(await exchange(code, { grant_type: "client_credentials" }), "unsupported_grant_type");
    assertOAuthError(await exchange(code, { grant_type: undefined }), "invalid_request");
    assertOAuthError(await exchange(undefined), "invalid_request");
    assertOAuthError(await exchange("rk_code_unknown"), "invalid_grant");
    const json = await t.kit.inject({ method: "POST", url: "/v1/authorization-codes/tokens", body: { grant_type: "authorization_code", code } });
    assertOAuthError(json, "invalid_request");
    const empty = await t.kit.inject({ method: "POST", url: "/v1/authorization-codes/tokens" });
    assertOAuthError(empty, "invalid_request");
    const invalidUtf8 = await t.kit.inject({
      method: "POST",
      url: "/v1/authorization-codes/tokens",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: Buffer.from([0x63, 0x6f, 0x64, 0x65, 0x3d, 0xff]),
    });
    assertOAuthError(invalidUtf8, "invalid_request");
    const huge = await exchangeCode(t, { grant_type: "authorization_code", code: "x".repeat(2 * 1024 * 1024) });
    assertOAuthError(huge, "invalid_request", 413);
    assert.equal(await oauthTokens(), 0);
  });

  it("accepts client credentials in an HTTP Basic header (RFC 6749 §2.3.1) and answers a wrong one with 401", async () => {
    const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}` });
    const code = await authorizedCode(t);
    const wrong = await exchangeCode(t, { grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI }, basic(t.app.clientId, "nope"));
    assertOAuthError(wrong, "invalid_client", 401);
    assert.match(wrong.headers["www-authenticate"] ?? "", /^Basic /);
    const right = await exchangeCode(t, { grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI }, basic(t.app.clientId, t.clientSecret));
    assert.equal(right.status, 200, right.body);
  });

  it("stores neither codes nor tokens nor client secrets in the clear", async () => {
    const code = await authorizedCode(t);
    const token = (await exchange(code)).json<{ access_token: string }>().access_token;
    const everything = JSON.stringify(
      await Promise.all(
        ["oauth_authorization_codes", "oauth_clients", "oauth_installations", "accounts_credentials"].map((name) => t.kit.storage.collection(name).find()),
      ),
    );
    for (const secret of [code, token, t.clientSecret]) assert.ok(!everything.includes(secret));
  });

  it("revokes the token on uninstall, on `tokens revoke`, and when the application's owner is deleted", async () => {
    const oauth = t.kit.plugin("oauth");
    const accounts = t.kit.plugin("accounts");
    const client = new InstallClient(t.kit);
    const uninstalled = (await exchange(await authorizedCode(t, client))).json<{ access_token: string }>().access_token;
    const events: unknown[] = [];
    t.kit.events.on("oauth.uninstalled", (event) => void events.push(event));
    assert.equal(await oauth.installations.uninstall(t.company.companyId, t.app.applicationId), true);
    assert.equal((await me(uninstalled)).status, 401);
    assert.deepEqual(events, [{ companyId: t.company.companyId, applicationId: t.app.applicationId }]);
    assert.equal(await oauth.installations.uninstall(t.company.companyId, t.app.applicationId), false);

    const revoked = (await exchange(await authorizedCode(t, client))).json<{ access_token: string }>().access_token;
    const [install] = await oauth.installations.list(t.company.companyId);
    assert.equal(await accounts.revokeCredential(install!.credentialId), true);
    assert.equal((await me(revoked)).status, 401);

    const orphaned = (await exchange(await authorizedCode(t, client))).json<{ access_token: string }>().access_token;
    assert.equal(await accounts.deleteCompany(t.app.companyId), true);
    assert.equal((await me(orphaned)).status, 401);
    assert.equal((await me(t.company.apiKey)).status, 200, "the installing company's own key is untouched");
  });

  it("refuses the code of a company deleted before the exchange, and sends its signed-in users back to sign in", async () => {
    const client = new InstallClient(t.kit);
    const code = await authorizedCode(t, client);
    assert.equal(await t.kit.plugin("accounts").deleteCompany(t.company.companyId), true);
    assertOAuthError(await exchange(code), "invalid_grant");
    const consent = await client.decide(installPath(t), "authorize");
    assert.equal(consent.location.pathname, "/integrations/oauth-install", "not to the client");
    assert.equal(await oauthTokens(), 0);
  });

  it("does not expire access tokens", async () => {
    const token = (await exchange(await authorizedCode(t))).json<{ access_token: string }>().access_token;
    t.clock.advance(5 * 365 * 24 * 60 * 60 * 1000);
    assert.equal((await me(token)).status, 200);
  });
});
