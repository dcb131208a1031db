import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { TestKit } from "../../support/test-kit.ts";
import { CONSOLE_REQUESTS, consoleFixture, OWNER_ACTIONS, type ConsoleFixture } from "./requests.ts";
import { pageText as text, ConsoleBrowser, csrfOf, OWNER, signedIn, startConsoleKit, VIEWER } from "./support.ts";


describe("console actions", () => {
  let t: TestKit;
  let f: ConsoleFixture;
  let owner: ConsoleBrowser;
  let companyId: string;

  before(async () => {
    t = await startConsoleKit();
    f = await consoleFixture(t);
    owner = await signedIn(t.kit, OWNER);
    companyId = t.company.companyId;
  });
  after(() => t.stop());

  it("starts a catalog upload and goes to its page, where the file is sent", async () => {
    const before_ = (await t.kit.plugin("catalog").listUploads(companyId)).length;
    const answer = await owner.act("/console/catalog/uploads", {});
    assert.equal(answer.status, 303);
    const uploads = await t.kit.plugin("catalog").listUploads(companyId);
    assert.equal(uploads.length, before_ + 1);
    const created = uploads.at(-1)!;
    assert.equal(answer.headers.location, `/console/catalog/uploads/${created.uploadId}`);
    const page = await owner.get(answer.headers.location!);
    assert.ok(page.body.includes(`data-upload="${created.uploadUrl.replace(/&/g, "&amp;")}"`));
    assert.match(page.headers["content-security-policy"] ?? "", /connect-src 'self' http:\/\/localhost:3000/, "the page may send the file to the upload target");
  });

  it("cancels a reminder and marks another a no-show, as the tactical routes do", async () => {
    for (const [action, state] of [["cancel", "canceled"], ["no-show", "no_show"]] as const) {
      const uuid = await f.reminder();
      const answer = await owner.act(`/console/reminders/${uuid}/${action}`);
      assert.equal(answer.status, 303);
      assert.equal(answer.headers.location, `/console/reminders/${uuid}`);
      assert.equal((await t.kit.plugin("appointments").reminders.get(companyId, uuid)).state, state);
    }
    const ended = await f.reminder();
    await owner.act(`/console/reminders/${ended}/cancel`);
    const again = await owner.act(`/console/reminders/${ended}/no-show`);
    assert.equal(again.status, 400, "a canceled reminder is no no-show");
    assert.match(text(again), /canceled/);
  });

  it("files a privacy request, checked as the API checks it", async () => {
    const answer = await owner.act("/console/privacy", { subjectPhone: "+13125550199" });
    assert.equal(answer.headers.location, "/console/privacy?done=requested");
    assert.ok((await t.kit.plugin("privacy").list(companyId)).some((request) => request.subjectPhone === "+13125550199" && !request.processed));
    const invalid = await owner.act("/console/privacy", { subjectPhone: "12" });
    assert.equal(invalid.status, 400);
    assert.match(text(invalid), /subjectPhone\s*: is not a phone number/);
    const empty = await owner.act("/console/privacy", {});
    assert.equal(empty.status, 400);
    assert.match(text(empty), /subjectPhone or subjectEmail is required/);
  });

  it("changes the messaging settings, refusing what the CLI refuses", async () => {
    assert.equal((await owner.act("/console/settings/sign-up-units", { type: "TRANSACTIONAL", language: "fr", country: "ca", name: "Québec" })).status, 303);
    assert.ok((await t.kit.plugin("subscriptions").signUpUnits.list(companyId)).some((unit) => unit.name === "Québec" && unit.country === "CA" && unit.type === "TRANSACTIONAL"));
    const badUnit = await owner.act("/console/settings/sign-up-units", { type: "MARKETING", language: "english", country: "US" });
    assert.equal(badUnit.status, 400);
    assert.match(text(badUnit), /language must be a two-letter code/);
    assert.equal((await owner.act("/console/settings/sign-up-units", { type: "PROMO", language: "en", country: "US" })).status, 400);

    assert.equal((await owner.act("/console/settings/sender-number", { number: "+15557654321" })).status, 303);
    assert.equal((await t.kit.plugin("accounts").getCompany(companyId))?.senderNumber, "+15557654321");
    const other = (await t.kit.provisionCompany({ name: "Globex" })).output as { senderNumber: string };
    const taken = await owner.act("/console/settings/sender-number", { number: other.senderNumber });
    assert.equal(taken.status, 400);
    assert.match(text(taken), /number/);

    assert.equal((await owner.act("/console/settings/message-prefix", { template: "{company} news: " })).status, 303);
    assert.equal((await t.kit.plugin("legacy").prefixes.template(companyId)).template, "{company} news: ");
    assert.equal((await owner.act("/console/settings/message-prefix", { template: "x".repeat(101) })).status, 400);
    const reset = await owner.act("/console/settings/message-prefix", { reset: "true" });
    assert.equal(reset.headers.location, "/console/settings?done=message-prefix-reset");
    assert.equal((await t.kit.plugin("legacy").prefixes.template(companyId)).custom, false);
    assert.match(text(await owner.get("/console/settings?done=message-prefix-reset")), /The message prefix is back to the default/);
  });

  it("creates an API key shown once that works within its scopes, and revokes keys of the company", async () => {
    const page = await owner.act("/console/settings/api-keys", { name: "Sync", "scope:subscriptions:read": "yes" });
    assert.equal(page.status, 200);
    const key = /<section class="secret"[^]*?<code>([^<]+)<\/code>/.exec(page.body)?.[1];
    assert.ok(key);
    assert.equal((await t.request({ url: "/v1/subscriptions?phone=%2B13125550100", token: key })).status, 200);
    assert.equal((await t.request({ method: "POST", url: "/v1/privacy/delete-request", body: { subjectPhone: "+13125550100" }, token: key })).status, 403, "only the ticked scope");
    assert.ok(!(await owner.get("/console/settings")).body.includes(key), "never shown again");
    const credential = (await t.kit.plugin("accounts").listCredentials(companyId)).find((candidate) => key.endsWith(candidate.hint) && candidate.label === "API key" && !candidate.revokedAt)!;
    assert.equal((await owner.act(`/console/settings/api-keys/${credential.id}/revoke`)).headers.location, "/console/settings?done=key-revoked");
    assert.equal((await t.request({ url: "/v1/me", token: key })).status, 401);
    assert.equal((await owner.act("/console/settings/api-keys", { name: " " })).status, 400);
  });

  it("registers an OAuth application with its secret shown once, and replaces the secret", async () => {
    const page = await owner.act("/console/settings/oauth-apps", { name: "Loyalty", redirectUris: "https://loyalty.example/callback\nhttp://localhost:8080/cb" });
    assert.equal(page.status, 200, page.body.slice(0, 300));
    const [app] = (await t.kit.plugin("oauth").applications.list(companyId)).filter((candidate) => candidate.name === "Loyalty");
    assert.deepEqual(app!.redirectUris, ["https://loyalty.example/callback", "http://localhost:8080/cb"]);
    const secret = /<section class="secret"[^]*?<code>([^<]+)<\/code>/.exec(page.body)?.[1]!;
    assert.ok(await t.kit.plugin("oauth").applications.authenticate(app!.clientId, secret));
    const rotated = await owner.act(`/console/settings/oauth-apps/${app!.applicationId}/rotate-secret`);
    const newSecret = /<section class="secret"[^]*?<code>([^<]+)<\/code>/.exec(rotated.body)?.[1]!;
    assert.equal(await t.kit.plugin("oauth").applications.authenticate(app!.clientId, secret), undefined);
    assert.ok(await t.kit.plugin("oauth").applications.authenticate(app!.clientId, newSecret));
    const badUri = await owner.act("/console/settings/oauth-apps", { name: "Bad", redirectUris: "ftp://x.example/cb" });
    assert.equal(badUri.status, 400);
  });

  it("adds users, changes roles and deletes users, keeping the last owner", async () => {
    const created = await owner.act("/console/settings/users", { email: "Support@Acme.example", password: "a long enough password", role: "viewer" });
    assert.match(created.headers.location ?? "", /^\/console\/settings\?done=user-created&user=/);
    const users = t.kit.plugin("oauth").users;
    const support = (await users.list(companyId)).find((user) => user.email === "support@acme.example")!;
    assert.equal(support.role, "viewer");
    assert.equal((await new ConsoleBrowser(t.kit).signIn("support@acme.example", "a long enough password")).status, 303, "the new user signs in");
    assert.equal((await owner.act("/console/settings/users", { email: "x@acme.example", password: "short", role: "viewer" })).status, 400);
    assert.equal((await owner.act("/console/settings/users", { email: "support@acme.example", password: "a long enough password", role: "viewer" })).status, 400, "the email is taken");
    assert.equal((await owner.act(`/console/settings/users/${support.id}/role`, { role: "owner" })).status, 303);
    assert.equal((await users.get(support.id))?.role, "owner");
    assert.equal((await owner.act(`/console/settings/users/${support.id}/role`, { role: "admin" })).status, 400);
    assert.equal((await owner.act(`/console/settings/users/${support.id}/delete`)).status, 303);
    assert.equal(await users.get(support.id), undefined);
    // Acme's owners are now OWNER alone: demoting or deleting them is refused.
    const me = (await users.list(companyId)).find((user) => user.email === OWNER)!;
    const demote = await owner.act(`/console/settings/users/${me.id}/role`, { role: "viewer" });
    assert.equal(demote.status, 400);
    assert.match(text(demote), /keeps at least one owner/);
    assert.equal((await owner.act(`/console/settings/users/${me.id}/delete`)).status, 400);
    assert.equal((await users.get(me.id))?.role, "owner");
  });

  it("refuses every owner action to a viewer with 403, changing nothing", async () => {
    const viewer = await signedIn(t.kit, VIEWER);
    // Made first: the fixture makes fresh reminders, keys and users for some requests.
    const requests = [];
    for (const key of OWNER_ACTIONS) requests.push([key, await CONSOLE_REQUESTS[key]!(f)] as const);
    const before_ = await snapshot(t, companyId);
    for (const [key, request] of requests) {
      const answer = await viewer.act(request.url, request.fields);
      assert.equal(answer.status, 403, `${key}: ${answer.status}`);
      assert.match(text(answer), /Only an owner of the company can make this change/, key);
    }
    await t.scheduler.flush();
    assert.deepEqual(await snapshot(t, companyId), before_);
  });

  it("refuses every action without the page's CSRF token, or with another session's, with 403", async () => {
    const other = await signedIn(t.kit, OWNER);
    const othersToken = csrfOf((await other.get("/console")).body)!;
    for (const key of [...OWNER_ACTIONS, "POST /console/sign-out"]) {
      const request = await CONSOLE_REQUESTS[key]!(f);
      for (const token of [undefined, "", othersToken, `${othersToken}x`]) {
        const answer = await owner.post(request.url, { ...request.fields, ...(token === undefined ? {} : { csrf_token: token }) });
        assert.equal(answer.status, 403, `${key} with token ${JSON.stringify(token)}: ${answer.status}`);
        assert.match(text(answer), /Form expired/);
      }
    }
    assert.equal((await owner.get("/console")).status, 200, "still signed in");
  });
});

/** What the owner actions change, read straight from the services. */
async function snapshot(t: TestKit, companyId: string) {
  const kit = t.kit;
  const reminders = await kit.plugin("appointments").reminders.list(companyId, { limit: 1000 });
  return {
      uploads: (await kit.plugin("catalog").listUploads(companyId)).length,
      reminders: reminders.filter((reminder) => reminder.state !== "scheduled").length,
      privacy: (await kit.plugin("privacy").list(companyId)).length,
      units: (await kit.plugin("subscriptions").signUpUnits.list(companyId)).length,
      company: await kit.plugin("accounts").getCompany(companyId),
      prefix: await kit.plugin("legacy").prefixes.template(companyId),
      applications: (await kit.plugin("accounts").listApplications(companyId)).length,
      revoked: (await kit.plugin("accounts").listCredentials(companyId)).filter((credential) => credential.revokedAt).length,
      oauthApps: await kit.plugin("oauth").applications.list(companyId),
      users: (await kit.plugin("oauth").users.list(companyId)).map((user) => [user.email, user.role]).sort(),
      campaigns: (await kit.plugin("campaigns").list(companyId)).map((campaign) => [campaign.id, campaign.status]),
      webhooks: await Promise.all((await kit.plugin("webhooks").registry.ofCompany(companyId)).map(async (webhook) => [webhook, await kit.plugin("webhooks").deliveries.log(webhook.id)])),
      signingKeys: await kit.plugin("webhooks").signingKeys.list((await kit.plugin("accounts").listApplications(companyId))[0]!.id),
  };
}
