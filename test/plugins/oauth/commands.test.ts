import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cli, newDataDir, openServerKit, whoAmI } from "../../support/cli.ts";
import { InstallClient } from "../../support/oauth.ts";
import type { Json } from "../../support/test-kit.ts";

const REDIRECT_URI = "https://shop-app.example.com/oauth/callback";

/** Installs through the printed install URL on the data directory's kit; returns the access token. */
async function installWithBrowser(dataDir: string, app: Json, email: string, password: string): Promise<string> {
  const kit = await openServerKit(dataDir);
  try {
    const install = new URL(app.installUrl);
    const path = `${install.pathname}${install.search}`;
    const browser = new InstallClient(kit);
    assert.equal((await browser.signIn(path, email, password)).status, 303);
    const { location } = await browser.decide(path, "authorize");
    const response = await kit.inject({
      method: "POST",
      url: "/v1/authorization-codes/tokens",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: location.searchParams.get("code")!,
        redirect_uri: REDIRECT_URI,
        client_id: app.clientId,
        client_secret: app.clientSecret,
      }).toString(),
    });
    assert.equal(response.status, 200, response.body);
    return response.json<{ access_token: string }>().access_token;
  } finally {
    await kit.stop();
  }
}

describe("reachkit oauth-apps, dashboard-users and oauth-installs", () => {
  it("registers a public application, signs a user in, installs, lists, rotates and uninstalls", async () => {
    const dataDir = newDataDir();
    const developer = (await cli(dataDir, "companies", "create", "--name", "Appmaker", "--json")).json;
    const acme = (await cli(dataDir, "companies", "create", "--name", "Acme", "--json")).json;

    const created = await cli(
      dataDir,
      ...["oauth-apps", "create", "--company", developer.id, "--name", "Shop Sync", "--redirect-uri", REDIRECT_URI],
      ...["--redirect-uri", "http://localhost:8080/callback", "--scopes", "subscriptions:read,subscriptions:write", "--json"],
    );
    assert.equal(created.code, 0, created.stderr);
    const app = created.json;
    assert.match(app.clientId, /^rk_cid_/);
    assert.match(app.clientSecret, /^rk_cs_/);
    assert.deepEqual(app.redirectUris, [REDIRECT_URI, "http://localhost:8080/callback"]);
    assert.deepEqual(app.scopes, ["subscriptions:read", "subscriptions:write"]);
    const installUrl = new URL(app.installUrl);
    assert.equal(`${installUrl.origin}${installUrl.pathname}`, "http://localhost:3000/integrations/oauth-install");
    assert.equal(installUrl.searchParams.get("client_id"), app.clientId);
    assert.equal(installUrl.searchParams.get("redirect_uri"), REDIRECT_URI);
    const text = await cli(dataDir, "oauth-apps", "create", "--company", developer.id, "--name", "Other", "--redirect-uri", REDIRECT_URI);
    assert.match(text.stdout, /clientSecret:\s+rk_cs_/);
    assert.match(text.stdout, /shown once/);

    const listed = await cli(dataDir, "oauth-apps", "list", "--company", developer.id, "--json");
    assert.deepEqual(listed.json.map((a: Json) => a.name), ["Shop Sync", "Other"]);
    assert.ok(!listed.stdout.includes(app.clientSecret) && !listed.stdout.includes("secretHash"), "never the secret");

    const user = await cli(dataDir, "dashboard-users", "create", "--company", acme.id, "--email", "Owner@Acme.example", "--json");
    assert.equal(user.code, 0, user.stderr);
    assert.equal(user.json.email, "owner@acme.example");
    assert.ok(user.json.password.length >= 20, "a generated password is printed once");
    const users = await cli(dataDir, "dashboard-users", "list", "--company", acme.id, "--json");
    assert.deepEqual(users.json.map((u: Json) => u.email), ["owner@acme.example"]);
    assert.ok(!users.stdout.includes("scrypt") && users.json[0].password === undefined);

    const token = await installWithBrowser(dataDir, app, "owner@acme.example", user.json.password);
    assert.equal(await whoAmI(dataDir, token), 200);
    const installs = await cli(dataDir, "oauth-installs", "list", "--company", acme.id, "--json");
    assert.deepEqual(installs.json.map((i: Json) => [i.applicationId, i.scopes]), [[app.applicationId, ["subscriptions:read", "subscriptions:write"]]]);

    const rotated = await cli(dataDir, "oauth-apps", "rotate-secret", "--client-id", app.clientId, "--json");
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.notEqual(rotated.json.clientSecret, app.clientSecret);
    const reinstalled = await installWithBrowser(dataDir, { ...app, clientSecret: rotated.json.clientSecret }, "owner@acme.example", user.json.password);
    assert.equal(await whoAmI(dataDir, token), 401, "the new install replaced the old token");

    const uninstalled = await cli(dataDir, "oauth-installs", "uninstall", "--company", acme.id, "--application", app.applicationId);
    assert.equal(uninstalled.code, 0, uninstalled.stderr);
    assert.equal(await whoAmI(dataDir, reinstalled), 401);
    assert.equal((await cli(dataDir, "oauth-installs", "uninstall", "--company", acme.id, "--application", app.applicationId)).code, 2);
    assert.deepEqual((await cli(dataDir, "oauth-installs", "list", "--company", acme.id, "--json")).json, []);

    assert.equal((await cli(dataDir, "dashboard-users", "delete", "--id", user.json.id)).code, 0);
    assert.equal((await cli(dataDir, "dashboard-users", "delete", "--id", user.json.id)).code, 2);
  });

  it("refuses bad input with exit code 2 and a message", async () => {
    const dataDir = newDataDir();
    const company = (await cli(dataDir, "companies", "create", "--name", "Appmaker", "--json")).json;
    const create = (...extra: string[]) => cli(dataDir, "oauth-apps", "create", "--company", company.id, "--name", "App", ...extra);
    const refusals: [() => Promise<{ code: number; stderr: string }>, RegExp][] = [
      [() => create(), /--redirect-uri is required/],
      [() => create("--redirect-uri", "http://shop-app.example.com/cb"), /must use https/],
      [() => create("--redirect-uri", "https://shop-app.example.com/cb#top"), /must not have a fragment/],
      [() => create("--redirect-uri", "/cb"), /not an absolute URL/],
      [() => create("--redirect-uri", REDIRECT_URI, "--scopes", "everything"), /unknown scope "everything"/],
      [() => cli(dataDir, "oauth-apps", "create", "--company", "nope", "--name", "App", "--redirect-uri", REDIRECT_URI), /no company nope/],
      [() => cli(dataDir, "oauth-apps", "rotate-secret", "--client-id", "rk_cid_nobody"), /no public application/],
      [() => cli(dataDir, "dashboard-users", "create", "--company", company.id, "--email", "not-an-email"), /not an email address/],
      [() => cli(dataDir, "dashboard-users", "create", "--company", company.id, "--email", "a@b.example", "--password", "short"), /at least 10 characters/],
      [() => cli(dataDir, "dashboard-users", "create", "--company", "nope", "--email", "a@b.example"), /no company nope/],
    ];
    for (const [run, message] of refusals) {
      const { code, stderr } = await run();
      assert.equal(code, 2, stderr);
      assert.match(stderr, message);
    }
    assert.equal((await cli(dataDir, "dashboard-users", "create", "--company", company.id, "--email", "a@b.example", "--password", "long enough pw")).code, 0);
    const duplicate = await cli(dataDir, "dashboard-users", "create", "--company", company.id, "--email", "A@B.example", "--password", "long enough pw");
    assert.equal(duplicate.code, 2);
    assert.match(duplicate.stderr, /exists/);
  });
});
