import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { LOGIN_FAILED } from "../../../plugins/oauth/index.ts";
import { serverPluginsWithFastPasswords, startServerPluginsKitWith } from "../../support/openapi-kit.ts";
import { hiddenFields, InstallClient, REDIRECT_URI } from "../../support/oauth.ts";
import type { TestKit } from "../../support/test-kit.ts";
import { ConsoleBrowser, csrfOf, OWNER, PASSWORD, signedIn, startConsoleKit, VIEWER } from "./support.ts";

const setCookie = (header: string | undefined, name: string) => (header ?? "").split(/,\s*(?=[A-Za-z0-9_]+=)/).find((cookie) => cookie.startsWith(`${name}=`)) ?? "";

describe("console sign-in and sign-out", () => {
  let t: TestKit;
  before(async () => {
    t = await startConsoleKit();
  });
  after(() => t.stop());

  it("signs in with a session cookie that is HttpOnly, SameSite, scoped to the console and as long as a sign-in lasts", async () => {
    const browser = new ConsoleBrowser(t.kit);
    const form = await browser.get("/console/sign-in?next=%2Fconsole%2Fmessages");
    assert.equal(form.status, 200);
    assert.match(setCookie(form.headers["set-cookie"], "rk_console_csrf"), /HttpOnly; SameSite=Lax/);
    const answer = await browser.post("/console/sign-in", { ...hiddenFields(form.body), email: "OWNER@acme.example ", password: PASSWORD });
    assert.equal(answer.status, 303);
    assert.equal(answer.headers.location, "/console/messages");
    const cookie = setCookie(answer.headers["set-cookie"], "rk_console");
    assert.match(cookie, /^rk_console=rk_ses_[A-Za-z0-9_-]+; Path=\/console; HttpOnly; SameSite=Lax; Max-Age=28800$/);
    assert.equal((await browser.get("/console/sign-in")).headers.location, "/console", "signed in already");
    assert.match((await browser.get("/console")).body, /owner@acme\.example \(owner\)/);
  });

  it("marks its cookies Secure when the console is served over https", async () => {
    const { kit } = await startServerPluginsKitWith("https://reachkit.example", { plugins: serverPluginsWithFastPasswords() });
    try {
      const company = await kit.provisionCompany({ name: "Acme" });
      await kit.plugin("oauth").users.create({ companyId: company.company.id, email: OWNER, password: PASSWORD });
      const browser = new ConsoleBrowser(kit);
      const form = await browser.get("/console/sign-in");
      assert.match(setCookie(form.headers["set-cookie"], "rk_console_csrf"), /; Secure$/);
      const answer = await browser.post("/console/sign-in", { csrf_token: csrfOf(form.body), email: OWNER, password: PASSWORD });
      assert.match(setCookie(answer.headers["set-cookie"], "rk_console"), /; Secure$/);
    } finally {
      await kit.stop();
    }
  });

  it("answers a wrong password and an unknown email alike", async () => {
    for (const [email, password] of [[OWNER, "wrong password"], ["nobody@acme.example", PASSWORD]]) {
      const browser = new ConsoleBrowser(t.kit, "10.0.0.9");
      const answer = await browser.signIn(email!, password);
      assert.equal(answer.status, 401);
      assert.ok(answer.body.includes(LOGIN_FAILED));
      assert.equal(answer.headers["set-cookie"], undefined);
    }
  });

  it("refuses the sign-in form without its CSRF token or cookie", async () => {
    const browser = new ConsoleBrowser(t.kit);
    const form = await browser.get("/console/sign-in");
    assert.equal((await browser.post("/console/sign-in", { email: OWNER, password: PASSWORD })).status, 403);
    const stranger = new ConsoleBrowser(t.kit);
    assert.equal((await stranger.post("/console/sign-in", { csrf_token: csrfOf(form.body), email: OWNER, password: PASSWORD })).status, 403, "another browser's token");
  });

  it("throttles failed sign-ins per email, counting those of the install page: the sixth is refused even with the right password", async () => {
    const kit = await startConsoleKit();
    try {
      const developer = await kit.kit.plugin("accounts").createCompany({ name: "Appmaker" });
      const app = await kit.kit.plugin("oauth").applications.create({ companyId: developer.id, name: "Shop", redirectUris: [REDIRECT_URI], scopes: ["subscriptions:read"] });
      const install = new URL(kit.kit.plugin("oauth").installUrl({ clientId: app.application.clientId, redirectUri: REDIRECT_URI }));
      for (let n = 0; n < 3; n++) await new InstallClient(kit.kit, `10.0.1.${n}`).signIn(`${install.pathname}${install.search}`, OWNER, "wrong password");
      for (let n = 0; n < 2; n++) assert.equal((await new ConsoleBrowser(kit.kit, `10.0.2.${n}`).signIn(OWNER, "wrong password")).status, 401);
      const refused = await new ConsoleBrowser(kit.kit, "10.0.3.1").signIn(OWNER, PASSWORD);
      assert.equal(refused.status, 429);
      assert.equal(refused.headers["retry-after"], "900");
      assert.match(refused.body, /Too many failed sign-ins. Try again in 15 minutes./);
      kit.clock.advance(15 * 60_000);
      assert.equal((await new ConsoleBrowser(kit.kit, "10.0.3.1").signIn(OWNER, PASSWORD)).status, 303);
    } finally {
      await kit.stop();
    }
  });

  it("goes only to pages of the console after signing in", async () => {
    for (const next of ["//evil.example/console", "https://evil.example/console", "/consoleevil", "/console/..//evil.example", "/docs"]) {
      const browser = new ConsoleBrowser(t.kit);
      const form = await browser.get("/console/sign-in");
      const answer = await browser.post("/console/sign-in", { csrf_token: csrfOf(form.body), email: OWNER, password: PASSWORD, next });
      assert.equal(answer.headers.location, "/console", next);
    }
  });

  it("signs out: the session ends on the server, so the old cookie no longer signs anyone in", async () => {
    const browser = await signedIn(t.kit, OWNER);
    const session = browser.cookies.get("rk_console")!;
    const answer = await browser.act("/console/sign-out");
    assert.equal(answer.status, 303);
    assert.equal(answer.headers.location, "/console/sign-in");
    assert.match(setCookie(answer.headers["set-cookie"], "rk_console"), /^rk_console=; Path=\/console; HttpOnly; SameSite=Lax; Max-Age=0/);
    const replay = new ConsoleBrowser(t.kit);
    replay.cookies.set("rk_console", session);
    assert.equal((await replay.get("/console")).status, 303);
  });

  it("ends a sign-in after eight hours, and at once for a deleted user; a new role holds from the next request", async () => {
    const browser = await signedIn(t.kit, VIEWER);
    const users = t.kit.plugin("oauth").users;
    const viewer = (await users.list(t.company.companyId)).find((user) => user.email === VIEWER)!;
    assert.equal((await browser.act("/console/settings/sign-up-units", { type: "MARKETING", language: "de", country: "DE" })).status, 403);
    await users.setRole(t.company.companyId, viewer.id, "owner");
    assert.equal((await browser.act("/console/settings/sign-up-units", { type: "MARKETING", language: "de", country: "DE" })).status, 303);
    await users.setRole(t.company.companyId, viewer.id, "viewer");
    t.clock.advance(8 * 60 * 60_000);
    assert.equal((await browser.get("/console")).status, 303);
    const again = await signedIn(t.kit, VIEWER);
    await users.deleteOf(t.company.companyId, viewer.id);
    assert.equal((await again.get("/console")).status, 303);
  });
});
