import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, it } from "node:test";
import { serverPlugins } from "../../server/server-kit.ts";
import { cliCommands } from "../../src/index.ts";
import { cli, newDataDir, whoAmI } from "../support/cli.ts";
import { TEST_SECRET, type Json } from "../support/test-kit.ts";

describe("reachkit CLI", () => {
  it("init --json prints exactly one object with the credentials, and a second init makes a second company", async () => {
    const dataDir = newDataDir();
    const first = await cli(dataDir, "init", "--company", "Acme Shoes", "--json");
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(Object.keys(first.json).sort(), ["apiKey", "companyId", "companyName", "inboundWebhookPath", "inboundWebhookUrl", "legacyToken", "senderNumber", "signUpSources", "webhookSigningKey"]);
    assert.equal(first.json.companyName, "Acme Shoes");
    assert.deepEqual(
      first.json.signUpSources.map((s: Json) => [s.type, s.language, s.country]),
      [
        ["MARKETING", "en", "US"],
        ["TRANSACTIONAL", "en", "US"],
      ],
    );
    for (const source of first.json.signUpSources) assert.deepEqual(Object.keys(source).sort(), ["country", "id", "language", "type"]);

    const second = await cli(dataDir, "init", "--company", "Acme Shoes", "--json");
    assert.notEqual(second.json.companyId, first.json.companyId);
    assert.notEqual(second.json.apiKey, first.json.apiKey);
    assert.equal(await whoAmI(dataDir, first.json.apiKey), 200, "the first company's key still works");
    assert.equal(await whoAmI(dataDir, second.json.apiKey), 200);
    const companies = await cli(dataDir, "companies", "list", "--json");
    assert.equal(companies.json.length, 2);
    assert.deepEqual(companies.json.map((c: Json) => c.domain), ["acme-shoes", "acme-shoes-2"]);
  });

  it("init without --json prints readable credentials", async () => {
    const result = await cli(newDataDir(), "init");
    assert.equal(result.code, 0);
    assert.match(result.stdout, /apiKey:\s+rk_key_/);
    assert.match(result.stdout, /legacyToken:\s+rk_leg_/);
    assert.match(result.stdout, /shown once/);
  });

  it("has --help on every command", async () => {
    const dataDir = newDataDir();
    for (const command of cliCommands(serverPlugins())) {
      const result = await cli(dataDir, ...command.name.split(" "), "--help");
      assert.equal(result.code, 0, command.name);
      assert.match(result.stdout, new RegExp(`Usage: reachkit ${command.name}`));
      assert.match(result.stdout, /--json/);
    }
    const general = await cli(dataDir, "--help");
    assert.match(general.stdout, /companies create/);
    assert.match(general.stdout, /signup-units list/);
  });

  it("answers usage mistakes with exit code 2 and a message", async () => {
    const dataDir = newDataDir();
    assert.equal((await cli(dataDir, "frobnicate")).code, 2);
    const missing = await cli(dataDir, "companies", "create");
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--name is required/);
    const unknownFlag = await cli(dataDir, "companies", "list", "--bogus");
    assert.equal(unknownFlag.code, 2);
    assert.match(unknownFlag.stderr, /bogus/);
  });

  it("creates applications with chosen scopes, and tokens that can be listed without secrets and revoked", async () => {
    const dataDir = newDataDir();
    const company = (await cli(dataDir, "companies", "create", "--name", "Beta", "--json")).json;
    const badScope = await cli(dataDir, "applications", "create", "--company", company.id, "--name", "x", "--scopes", "everything");
    assert.equal(badScope.code, 2);
    assert.match(badScope.stderr, /unknown scope "everything"/);
    const app = await cli(dataDir, "applications", "create", "--company", company.id, "--name", "Reader", "--scopes", "subscriptions:read", "--json");
    assert.deepEqual(app.json.scopes, ["subscriptions:read"]);
    assert.equal(await whoAmI(dataDir, app.json.apiKey), 200);

    const legacy = await cli(dataDir, "tokens", "create", "--company", company.id, "--legacy", "--json");
    assert.match(legacy.json.token, /^rk_leg_/);
    const listed = await cli(dataDir, "tokens", "list", "--company", company.id, "--json");
    assert.equal(listed.json.length, 2);
    assert.ok(!listed.stdout.includes(app.json.apiKey) && !listed.stdout.includes(legacy.json.token));
    for (const credential of listed.json) assert.equal(credential.tokenHash, undefined);

    const keyId = listed.json.find((c: Json) => c.kind === "api_key").id;
    assert.equal((await cli(dataDir, "tokens", "revoke", "--id", keyId)).code, 0);
    assert.equal(await whoAmI(dataDir, app.json.apiKey), 401);
    assert.equal((await cli(dataDir, "tokens", "revoke", "--id", keyId)).code, 2);
  });

  it("creates and lists sign-up units", async () => {
    const dataDir = newDataDir();
    const company = (await cli(dataDir, "companies", "create", "--name", "Gamma", "--json")).json;
    const unit = await cli(dataDir, "signup-units", "create", "--company", company.id, "--type", "transactional", "--language", "FR", "--country", "ca", "--json");
    assert.equal(unit.code, 0, unit.stderr);
    assert.deepEqual([unit.json.type, unit.json.language, unit.json.country], ["TRANSACTIONAL", "fr", "CA"]);
    assert.equal((await cli(dataDir, "signup-units", "create", "--company", company.id, "--type", "OTHER")).code, 2);
    const list = await cli(dataDir, "signup-units", "list", "--company", company.id, "--json");
    assert.deepEqual(list.json.map((u: Json) => u.id), [unit.json.id]);
  });

  it("lists dead jobs", async () => {
    const result = await cli(newDataDir(), "jobs", "list", "--status", "dead", "--json");
    assert.equal(result.code, 0);
    assert.deepEqual(result.json, []);
  });

  it("runs as the reachkit bin", async () => {
    const dataDir = newDataDir();
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "server/cli.ts", "init", "--data-dir", dataDir, "--json"], {
      env: { ...process.env, REACHKIT_SECRET: TEST_SECRET },
    });
    const output = JSON.parse(stdout);
    assert.match(output.apiKey, /^rk_key_/);
  });
});
