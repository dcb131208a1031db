import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { checkRedirectUri, MAX_REDIRECT_URIS, scryptPasswordHasher } from "../../../plugins/oauth/index.ts";
import { authorizedCode, exchangeCode, InstallClient, installPath, REDIRECT_URI, startOAuthTestKit, type OAuthTestKit } from "../../support/oauth.ts";

describe("public applications", () => {
  let t: OAuthTestKit;
  beforeEach(async () => {
    t = await startOAuthTestKit();
  });
  afterEach(() => t.stop());

  const exchange = (code: string, clientSecret: string) =>
    exchangeCode(t, { grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, client_id: t.app.clientId, client_secret: clientSecret });

  it("are accounts applications of kind public, owned by the registering company", async () => {
    const application = await t.kit.plugin("accounts").getApplication(t.app.applicationId);
    assert.equal(application?.kind, "public");
    assert.equal(application?.companyId, t.app.companyId);
    assert.notEqual(t.app.companyId, t.company.companyId);
    const listed = await t.kit.plugin("oauth").applications.list(t.app.companyId);
    assert.deepEqual(listed, [t.app]);
    assert.deepEqual(await t.kit.plugin("oauth").applications.list(t.company.companyId), [], "listed by owner only");
  });

  it("rotates the client secret: the old one stops working at once, the new one works", async () => {
    const client = new InstallClient(t.kit);
    const { clientSecret } = await t.kit.plugin("oauth").applications.rotateSecret(t.app.clientId);
    assert.notEqual(clientSecret, t.clientSecret);
    const refused = await exchange(await authorizedCode(t, client), t.clientSecret);
    assert.equal(refused.status, 400);
    assert.equal(refused.json<{ error: string }>().error, "invalid_client");
    assert.equal((await exchange(await authorizedCode(t, client), clientSecret)).status, 200);
  });

  it("stops installing once deleted: the install page shows an error and its codes no longer trade", async () => {
    const client = new InstallClient(t.kit);
    const code = await authorizedCode(t, client);
    assert.equal(await t.kit.plugin("accounts").deleteApplication(t.app.applicationId), true);
    const page = await client.get(installPath(t));
    assert.equal(page.status, 400);
    assert.match(page.body, /No application has the client_id/);
    assert.equal((await exchange(code, t.clientSecret)).json<{ error: string }>().error, "invalid_client");
  });

  it("checks redirect URIs when registered: absolute, https or loopback http, no fragment, at most twenty", async () => {
    for (const uri of ["https://a.example/cb", "https://a.example/cb?tenant=1", "http://localhost:8080/cb", "http://127.0.0.1/cb", "http://[::1]:3000/cb"]) {
      assert.equal(checkRedirectUri(uri), uri, "returned unchanged: matching is exact");
    }
    for (const uri of ["http://a.example/cb", "ftp://a.example/cb", "https://a.example/cb#x", "/cb", "javascript:alert(1)", `https://a.example/${"x".repeat(2048)}`]) {
      assert.throws(() => checkRedirectUri(uri), Error, uri);
    }
    const create = (redirectUris: string[], scopes: ["subscriptions:read"] | [] = ["subscriptions:read"]) =>
      t.kit.plugin("oauth").applications.create({ companyId: t.app.companyId, name: "App", redirectUris, scopes });
    const many = Array.from({ length: MAX_REDIRECT_URIS + 1 }, (_, index) => `https://a.example/cb${index}`);
    await assert.rejects(create(many), /at most 20 redirect URIs/);
    assert.equal((await create(many.slice(0, MAX_REDIRECT_URIS))).application.redirectUris.length, MAX_REDIRECT_URIS);
    await assert.rejects(create([]), /at least one redirect URI/);
    await assert.rejects(create(["https://a.example/cb"], []), /at least one scope/);
  });
});

describe("scrypt passwords", () => {
  const hasher = scryptPasswordHasher({ N: 1024, r: 8, p: 1 });

  it("stores salt and parameters with the hash, and verifies only the right password", async () => {
    const first = await hasher.hash("correct horse battery");
    const second = await hasher.hash("correct horse battery");
    assert.match(first, /^scrypt\$1024\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    assert.notEqual(first, second, "a fresh salt each time");
    assert.equal(await hasher.verify("correct horse battery", first), true);
    assert.equal(await hasher.verify("correct horse batterY", first), false);
    assert.equal(await hasher.verify("correct horse battery", "plain-text"), false);
    assert.equal(await scryptPasswordHasher().verify("correct horse battery", first), true, "old parameters stay verifiable after a cost change");
  });
});
