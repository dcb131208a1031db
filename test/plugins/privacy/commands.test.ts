import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cli, newDataDir, openServerKit } from "../../support/cli.ts";

describe("privacy CLI", () => {
  it("privacy-requests create queues a request for the server's job runner; list shows them masked", async () => {
    const dataDir = newDataDir();
    const { companyId } = (await cli(dataDir, "init", "--company", "Acme", "--json")).json;
    const created = await cli(dataDir, "privacy-requests", "create", "--company", companyId, "--phone", "(914) 844-0001", "--message", "by phone", "--json");
    assert.equal(created.code, 0, created.stderr);
    assert.deepEqual(
      (({ processed, type, subjectPhone, requestMsg }) => ({ processed, type, subjectPhone, requestMsg }))(created.json),
      { processed: false, type: "DELETE", subjectPhone: "+*****0001", requestMsg: "by phone" },
    );
    const listed = await cli(dataDir, "privacy-requests", "list", "--company", companyId);
    assert.match(listed.stdout, /\+\*{5}0001/);
    // The number's hidden digits in any spelling (ids and timestamps may hold "844" by chance).
    assert.doesNotMatch(listed.stdout, /844\D?0001/);
    const kit = await openServerKit(dataDir);
    assert.equal((await kit.jobs.list({ type: "privacy.process", status: "queued" })).length, 1, "durable: the server processes it");
    await kit.stop();

    const refused = await cli(dataDir, "privacy-requests", "create", "--company", companyId);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /subjectPhone or subjectEmail is required/);
    assert.equal((await cli(dataDir, "privacy-requests", "create", "--company", "nope", "--email", "a@b.co")).code, 2);
  });
});
