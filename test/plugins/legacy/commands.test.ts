import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cli, newDataDir } from "../../support/cli.ts";

describe("legacy CLI", () => {
  it("message-prefix show, set and reset a company's prefix of transactional messages", async () => {
    const dataDir = newDataDir();
    const { companyId } = (await cli(dataDir, "init", "--company", "Acme", "--json")).json;
    const shown = await cli(dataDir, "message-prefix", "show", "--company", companyId, "--json");
    assert.deepEqual(shown.json, { companyId, template: "{company}: ", custom: false, example: "Acme: Your order has shipped." });
    const set = await cli(dataDir, "message-prefix", "set", "--company", companyId, "--template", "{company}: Hi {firstName}, ");
    assert.equal(set.code, 0);
    assert.match(set.stdout, /example: +Acme: Hi Ada, Your order has shipped\./);
    assert.equal((await cli(dataDir, "message-prefix", "show", "--company", companyId, "--json")).json.custom, true);
    assert.equal((await cli(dataDir, "message-prefix", "reset", "--company", companyId, "--json")).json.template, "{company}: ");
    const tooLong = await cli(dataDir, "message-prefix", "set", "--company", companyId, "--template", "x".repeat(101));
    assert.equal(tooLong.code, 2);
    assert.match(tooLong.stderr, /at most 100 characters/);
    assert.equal((await cli(dataDir, "message-prefix", "show", "--company", "nope")).code, 2);
  });
});
