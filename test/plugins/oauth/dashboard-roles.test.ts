import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { memoryStorage } from "../../../adapters/storage/memory/index.ts";
import { LastOwnerError } from "../../../plugins/oauth/index.ts";
import { oauthCollections } from "../../../plugins/oauth/records.ts";
import type { Doc } from "../../../src/index.ts";
import { hiddenFields, InstallClient, installPath, startOAuthTestKit, USER_EMAIL, type OAuthTestKit } from "../../support/oauth.ts";

const PASSWORD = "a long enough password";

describe("dashboard users' roles", () => {
  let t: OAuthTestKit;
  beforeEach(async () => {
    t = await startOAuthTestKit();
  });
  afterEach(() => t.stop());

  it("makes a user an owner unless told viewer, lists the role, and refuses another role", async () => {
    const users = t.kit.plugin("oauth").users;
    const viewer = await users.create({ companyId: t.company.companyId, email: "viewer@acme.example", password: PASSWORD, role: "viewer" });
    assert.equal(viewer.role, "viewer");
    assert.deepEqual(
      (await users.list(t.company.companyId)).map((user) => [user.email, user.role]).sort(),
      [
        [USER_EMAIL, "owner"],
        ["viewer@acme.example", "viewer"],
      ].sort(),
    );
    await assert.rejects(users.create({ companyId: t.company.companyId, email: "x@acme.example", password: PASSWORD, role: "admin" as "owner" }), /a role is one of owner, viewer/);
  });

  it("keeps one owner per company: neither demoting nor deleting the last owner is allowed; with a second owner both are", async () => {
    const users = t.kit.plugin("oauth").users;
    const companyId = t.company.companyId;
    await assert.rejects(users.setRole(companyId, t.user.id, "viewer"), LastOwnerError);
    await assert.rejects(users.deleteOf(companyId, t.user.id), LastOwnerError);
    const second = await users.create({ companyId, email: "second@acme.example", password: PASSWORD });
    assert.equal((await users.setRole(companyId, t.user.id, "viewer"))?.role, "viewer");
    await assert.rejects(users.deleteOf(companyId, second.id), LastOwnerError);
    assert.equal(await users.deleteOf(companyId, t.user.id), true);
    assert.deepEqual((await users.list(companyId)).map((user) => user.email), ["second@acme.example"]);
  });

  it("acts on another company's user as on no user: undefined and false, nothing changed", async () => {
    const users = t.kit.plugin("oauth").users;
    const other = await t.kit.plugin("accounts").createCompany({ name: "Globex" });
    const theirs = await users.create({ companyId: other.id, email: "owner@globex.example", password: PASSWORD });
    await users.create({ companyId: other.id, email: "second@globex.example", password: PASSWORD });
    assert.equal(await users.setRole(t.company.companyId, theirs.id, "viewer"), undefined);
    assert.equal(await users.deleteOf(t.company.companyId, theirs.id), false);
    assert.equal(await users.getOf(t.company.companyId, theirs.id), undefined);
    assert.equal((await users.get(theirs.id))?.role, "owner");
  });
});

describe("dashboard users made before roles", () => {
  it("become owners when the kit starts", async () => {
    const storage = memoryStorage();
    await storage.ensureCollections(oauthCollections);
    // As a kit before roles stored it: no role field.
    const old = { id: "u-old", companyId: "c-old", email: "old@acme.example", passwordHash: "scrypt$1$1$1$x$y", createdAt: 1 };
    await storage.collection<Doc>("oauth_dashboard_users").insert(old);
    const t = await startOAuthTestKit({ storage });
    try {
      assert.equal((await t.kit.plugin("oauth").users.get("u-old"))?.role, "owner");
      // A user made now keeps the role it was given.
      const viewer = await t.kit.plugin("oauth").users.create({ companyId: t.company.companyId, email: "v@acme.example", password: PASSWORD, role: "viewer" });
      assert.equal((await t.kit.plugin("oauth").users.get(viewer.id))?.role, "viewer");
    } finally {
      await t.kit.stop();
    }
  });
});

describe("the install page and roles", () => {
  it("shows a viewer a 403 page instead of the consent form, and refuses their consent: no code is issued", async () => {
    const t = await startOAuthTestKit();
    try {
      await t.kit.plugin("oauth").users.create({ companyId: t.company.companyId, email: "viewer@acme.example", password: PASSWORD, role: "viewer" });
      const browser = new InstallClient(t.kit);
      const url = installPath(t, { state: "s" });
      // The sign-in form's fields: their CSRF token stays valid for this browser once signed in.
      const fields = hiddenFields((await browser.get(url)).body);
      assert.equal((await browser.post("/integrations/oauth-install/login", { ...fields, email: "viewer@acme.example", password: PASSWORD })).status, 303);
      const page = await browser.get(url);
      assert.equal(page.status, 403);
      assert.match(page.body, /Only an owner can install/);
      const answer = await browser.post("/integrations/oauth-install", { ...fields, decision: "authorize" });
      assert.equal(answer.status, 403);
      assert.match(answer.body, /Only an owner can install/);
      assert.equal(await t.kit.storage.collection("oauth_authorization_codes").count(), 0);
    } finally {
      await t.stop();
    }
  });
});
