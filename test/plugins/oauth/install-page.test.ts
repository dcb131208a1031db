import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { LOGIN_FAILED, type PasswordHasher } from "../../../plugins/oauth/index.ts";
import { SCOPE_DESCRIPTIONS, type InjectResponse } from "../../../src/index.ts";
import {
  fastPasswords,
  hiddenFields,
  InstallClient,
  installPath,
  REDIRECT_URI,
  startOAuthTestKit,
  USER_EMAIL,
  USER_PASSWORD,
  type OAuthTestKit,
} from "../../support/oauth.ts";

const LOGIN = "/integrations/oauth-install/login";
const CONSENT = "/integrations/oauth-install";

function assertHtmlPage(response: InjectResponse, status: number): void {
  assert.equal(response.status, status, response.body);
  assert.equal(response.headers["content-type"], "text/html; charset=utf-8");
  assert.equal(response.headers["x-frame-options"], "DENY");
  assert.match(response.headers["content-security-policy"] ?? "", /frame-ancestors 'none'/);
  assert.equal(response.headers["cache-control"], "no-store");
  assert.equal(response.headers.location, undefined, "an install page never redirects here");
}

async function storedCodes(t: OAuthTestKit): Promise<number> {
  return t.kit.storage.collection("oauth_authorization_codes").count();
}

async function oauthTokens(t: OAuthTestKit): Promise<number> {
  return t.kit.storage.collection<{ id: string; kind: string }>("accounts_credentials").count({ kind: "oauth" });
}

describe("OAuth install page", () => {
  let t: OAuthTestKit;
  let browser: InstallClient;
  beforeEach(async () => {
    t = await startOAuthTestKit();
    browser = new InstallClient(t.kit);
  });
  afterEach(() => t.stop());

  it("shows an accessible sign-in form with a CSRF token, on a page that cannot be framed", async () => {
    const page = await browser.get(installPath(t));
    assertHtmlPage(page, 200);
    assert.match(page.body, /<html lang="en">/);
    assert.match(page.body, /<h1>Sign in to install Shop Sync<\/h1>/);
    assert.match(page.body, /<label for="email">Email<\/label>\s*<input type="email" id="email" name="email" autocomplete="username" required/);
    assert.match(page.body, /<label for="password">Password<\/label>\s*<input type="password" id="password" name="password"/);
    assert.match(page.body, /<form method="post" action="\/integrations\/oauth-install\/login">/);
    assert.doesNotMatch(page.body, /<script/i, "works without JavaScript");
    const fields = hiddenFields(page.body);
    assert.ok(fields.csrf_token && fields.csrf_token.length >= 40);
    assert.equal(fields.client_id, t.app.clientId);
    assert.equal(fields.redirect_uri, REDIRECT_URI);
    assert.match(page.headers["set-cookie"] ?? "", /^rk_csrf=[A-Za-z0-9_-]{43}; Path=\/integrations\/oauth-install; HttpOnly; SameSite=Lax$/);
  });

  it("signs in with a session cookie (HttpOnly, SameSite, expiry), then returns to the install page", async () => {
    const signedIn = await browser.signIn(installPath(t, { state: "xyz" }));
    assert.equal(signedIn.status, 303, signedIn.body);
    // A path, not a URL: the browser stays on the origin it opened the page on, whatever the public URL says.
    assert.match(signedIn.headers.location!, /^\/integrations\/oauth-install\?/);
    const back = new URL(signedIn.headers.location!, "http://any.example");
    assert.equal(back.searchParams.get("client_id"), t.app.clientId);
    assert.equal(back.searchParams.get("redirect_uri"), REDIRECT_URI);
    assert.equal(back.searchParams.get("state"), "xyz");
    assert.match(signedIn.headers["set-cookie"] ?? "", /^rk_session=rk_ses_[A-Za-z0-9_-]+; Path=\/integrations\/oauth-install; HttpOnly; SameSite=Lax; Max-Age=28800$/);
    const stored = await t.kit.storage.collection<{ id: string; tokenHash: string }>("oauth_login_sessions").find();
    assert.equal(stored.items.length, 1);
    assert.ok(!JSON.stringify(stored.items).includes(browser.jar.get("rk_session")!), "only the hash of the session token is stored");
  });

  it("asks consent naming the application, the company and each requested scope in plain words", async () => {
    await browser.signIn(installPath(t));
    const consent = await browser.get(installPath(t));
    assertHtmlPage(consent, 200);
    assert.match(consent.body, /<h1>Install Shop Sync for Acme\?<\/h1>/);
    for (const scope of ["subscriptions:read", "subscriptions:write"] as const) assert.ok(consent.body.includes(SCOPE_DESCRIPTIONS[scope]), scope);
    assert.match(consent.body, /Signed in as owner@acme\.example/);
    assert.match(consent.body, /<button type="submit" name="decision" value="authorize" class="primary">Authorize<\/button>/);
    assert.match(consent.body, /<button type="submit" name="decision" value="cancel" class="secondary">Cancel<\/button>/);
    assert.match(consent.headers["content-security-policy"]!, /form-action 'self' https:\/\/shop-app\.example\.com;/);

    const narrowed = await browser.get(installPath(t, { scopes: ["subscriptions:read"] }));
    assert.ok(narrowed.body.includes(SCOPE_DESCRIPTIONS["subscriptions:read"]));
    assert.ok(!narrowed.body.includes(SCOPE_DESCRIPTIONS["subscriptions:write"]), "only the requested scopes are listed");
  });

  it("Authorize redirects to the redirect URI with code, authorizationCode and the state unchanged", async () => {
    await browser.signIn(installPath(t));
    const state = "a b&c=d/é?%2F";
    const { response, location } = await browser.decide(installPath(t, { state }), "authorize");
    assert.equal(response.status, 303);
    assert.equal(`${location.origin}${location.pathname}`, REDIRECT_URI);
    const code = location.searchParams.get("code");
    assert.match(code ?? "", /^rk_code_[A-Za-z0-9_-]{43}$/);
    assert.equal(location.searchParams.get("authorizationCode"), code);
    assert.equal(location.searchParams.get("state"), state);
    const stored = await t.kit.storage.collection("oauth_authorization_codes").find();
    assert.equal(stored.items.length, 1);
    assert.ok(!JSON.stringify(stored.items).includes(code!), "codes are stored hashed");
  });

  it("passes a tampered or long state back unchanged, and leaves it out when there was none", async () => {
    await browser.signIn(installPath(t));
    const tampered = await browser.decide(installPath(t, { state: "<script>alert(1)</script>" }), "authorize");
    assert.equal(tampered.location.searchParams.get("state"), "<script>alert(1)</script>");
    const longest = "é".repeat(341); // 2,046 characters once URL-encoded: within the limit
    assert.equal((await browser.decide(installPath(t, { state: longest }), "authorize")).location.searchParams.get("state"), longest);
    const none = await browser.decide(installPath(t), "authorize");
    assert.equal(none.location.searchParams.has("state"), false);
  });

  it("Cancel redirects with error=access_denied and the state, and issues nothing", async () => {
    await browser.signIn(installPath(t));
    const { response, location } = await browser.decide(installPath(t, { state: "keep-me" }), "cancel");
    assert.equal(response.status, 303);
    assert.equal(`${location.origin}${location.pathname}`, REDIRECT_URI);
    assert.equal(location.searchParams.get("error"), "access_denied");
    assert.equal(location.searchParams.get("state"), "keep-me");
    assert.equal(location.searchParams.has("code"), false);
    assert.equal(await storedCodes(t), 0);
  });

  describe("a bad install link is an error page, never a redirect", () => {
    const bad = {
      client: () => ({ clientId: "rk_cid_nobody" }),
      oneCharacter: () => ({ redirectUri: REDIRECT_URI.replace("callback", "callbacc") }),
      case: () => ({ redirectUri: REDIRECT_URI.replace("callback", "Callback") }),
      addedQuery: () => ({ redirectUri: `${REDIRECT_URI}?next=/admin` }),
      trailingSlash: () => ({ redirectUri: `${REDIRECT_URI}/` }),
    };
    const cases: [string, (t: OAuthTestKit) => string, RegExp, { client_id?: string; redirect_uri?: string; state?: string; scope?: string }?][] = [
      ["a missing client_id", () => `/integrations/oauth-install?redirect_uri=${encodeURIComponent(REDIRECT_URI)}`, /has no client_id/, { client_id: "" }],
      ["an unknown client_id", (t) => installPath(t, bad.client()), /No application has the client_id/, { client_id: "rk_cid_nobody" }],
      ["a client_id given twice", (t) => `${installPath(t)}&client_id=${t.app.clientId}`, /gives client_id more than once/],
      ["a missing redirect_uri", (t) => `/integrations/oauth-install?client_id=${t.app.clientId}`, /has no redirect_uri/, { redirect_uri: "" }],
      ["a redirect_uri differing in one character", (t) => installPath(t, bad.oneCharacter()), /not registered/, { redirect_uri: bad.oneCharacter().redirectUri }],
      ["a redirect_uri differing in case", (t) => installPath(t, bad.case()), /not registered/, { redirect_uri: bad.case().redirectUri }],
      ["a redirect_uri with an added query", (t) => installPath(t, bad.addedQuery()), /not registered/, { redirect_uri: bad.addedQuery().redirectUri }],
      ["a state over 2,048 characters once URL-encoded", (t) => installPath(t, { state: "é".repeat(342) }), /state of this install link is longer than 2048/, { state: "x".repeat(2049) }],
      ["a scope over 2,048 characters once URL-encoded", (t) => installPath(t, { scopes: Array(90).fill("subscriptions:read") }), /scope of this install link is longer than 2048/, { scope: "x".repeat(2049) }],
      ["a redirect_uri with a trailing slash", (t) => installPath(t, bad.trailingSlash()), /not registered/, { redirect_uri: bad.trailingSlash().redirectUri }],
    ];
    for (const [name, url, message, forgedConsent] of cases) {
      it(`refuses ${name}`, async () => {
        assertHtmlPage(await browser.get(url(t)), 400);
        await browser.signIn(installPath(t));
        const page = await browser.get(url(t));
        assertHtmlPage(page, 400);
        assert.match(page.body, message);
        if (forgedConsent) {
          const fields = hiddenFields((await browser.get(installPath(t))).body);
          const consent = await browser.post(CONSENT, { ...fields, ...forgedConsent, decision: "authorize" });
          assertHtmlPage(consent, 400);
        }
        assert.equal(await storedCodes(t), 0);
      });
    }
  });

  it("redirects a scope that is unknown, or not granted to the application, with error=invalid_scope", async () => {
    await browser.signIn(installPath(t));
    for (const scopes of [["subscriptions:read", "subscriptions:everything"], ["privacy_requests:write"]]) {
      const page = await browser.get(installPath(t, { scopes, state: "st" }));
      assert.equal(page.status, 303);
      const location = new URL(page.headers.location!);
      assert.equal(`${location.origin}${location.pathname}`, REDIRECT_URI);
      assert.equal(location.searchParams.get("error"), "invalid_scope");
      assert.equal(location.searchParams.get("state"), "st");
      const forged = await browser.post(CONSENT, { ...hiddenFields((await browser.get(installPath(t))).body), scope: scopes.join(" "), decision: "authorize" });
      assert.equal(new URL(forged.headers.location!).searchParams.get("error"), "invalid_scope");
    }
    assert.equal(await storedCodes(t), 0);
  });

  it("refuses a form POST without its CSRF token, or with one of another browser, and issues nothing", async () => {
    const page = await browser.get(installPath(t));
    const { csrf_token: token, ...fields } = hiddenFields(page.body);
    const noToken = await browser.post(LOGIN, { ...fields, email: USER_EMAIL, password: USER_PASSWORD });
    assertHtmlPage(noToken, 403);
    assert.match(noToken.body, /could not be verified/);
    assert.equal(noToken.headers["set-cookie"], undefined, "no session");

    const other = new InstallClient(t.kit);
    await other.get(installPath(t));
    const foreignToken = await other.post(LOGIN, { ...fields, csrf_token: token, email: USER_EMAIL, password: USER_PASSWORD });
    assertHtmlPage(foreignToken, 403);

    await browser.signIn(installPath(t));
    const consent = hiddenFields((await browser.get(installPath(t))).body);
    const { csrf_token: _token, ...consentFields } = consent;
    assertHtmlPage(await browser.post(CONSENT, { ...consentFields, decision: "authorize" }), 403);
    assertHtmlPage(await browser.post(CONSENT, { ...consentFields, csrf_token: "x".repeat(43), decision: "authorize" }), 403);
    browser.jar.delete("rk_csrf");
    assertHtmlPage(await browser.post(CONSENT, { ...consent, decision: "authorize" }), 403);
    assert.equal(await storedCodes(t), 0);
    assert.equal(await oauthTokens(t), 0);
  });

  it("answers a wrong password and an unknown email alike, with one generic message", async () => {
    const wrongPassword = await browser.signIn(installPath(t), USER_EMAIL, "not the password");
    assertHtmlPage(wrongPassword, 401);
    assert.ok(wrongPassword.body.includes(LOGIN_FAILED));
    assert.equal(wrongPassword.headers["set-cookie"], undefined);
    const unknownEmail = await browser.signIn(installPath(t), "nobody@acme.example", "not the password");
    assert.equal(unknownEmail.status, 401);
    assert.equal(unknownEmail.body.replace("nobody@acme.example", USER_EMAIL), wrongPassword.body, "the same page, but for the email typed");
    const retry = hiddenFields(wrongPassword.body);
    assert.equal(retry.client_id, t.app.clientId, "the form keeps the install request");
  });

  it("checks one password hash whether the email exists or not, so the timing is the same", async () => {
    const checked: string[] = [];
    const recording: PasswordHasher = {
      hash: (password) => fastPasswords.hash(password),
      async verify(password, stored) {
        checked.push(stored);
        return fastPasswords.verify(password, stored);
      },
    };
    const counted = await startOAuthTestKit({ oauth: { passwordHasher: recording } });
    try {
      const client = new InstallClient(counted.kit);
      await client.signIn(installPath(counted), USER_EMAIL, "wrong password");
      await client.signIn(installPath(counted), "nobody@acme.example", "wrong password");
      await client.signIn(installPath(counted), "someone-else@acme.example", "wrong password");
      assert.equal(checked.length, 3, "one scrypt check per attempt, known email or not");
      assert.match(checked[1]!, /^scrypt\$1024\$8\$1\$/, "an unknown email is checked against a decoy hash of the same cost");
      assert.equal(checked[1], checked[2]);
    } finally {
      await counted.stop();
    }
  });

  it("rate-limits failed sign-ins per email: the sixth attempt is refused even with the right password, until the window ends", async () => {
    for (let attempt = 1; attempt <= 5; attempt++) assert.equal((await browser.signIn(installPath(t), USER_EMAIL, `wrong ${attempt}`)).status, 401);
    const limited = await browser.signIn(installPath(t), USER_EMAIL, USER_PASSWORD);
    assertHtmlPage(limited, 429);
    assert.match(limited.body, /Too many failed sign-ins\. Try again in 15 minutes\./);
    assert.equal(limited.headers["retry-after"], "900");
    assert.equal(limited.headers["set-cookie"], undefined);
    assert.equal((await new InstallClient(t.kit, "10.0.0.9").signIn(installPath(t), USER_EMAIL, USER_PASSWORD)).status, 429, "per email, from any address");
    t.clock.advance(15 * 60 * 1000);
    assert.equal((await browser.signIn(installPath(t), USER_EMAIL, USER_PASSWORD)).status, 303);
  });

  it("rate-limits failed sign-ins per address: after twenty, that address may not sign in; others may", async () => {
    for (let attempt = 1; attempt <= 20; attempt++) {
      assert.equal((await browser.signIn(installPath(t), `guess${attempt}@acme.example`, "guess")).status, 401);
    }
    assert.equal((await browser.signIn(installPath(t), USER_EMAIL, USER_PASSWORD)).status, 429);
    assert.equal((await new InstallClient(t.kit, "10.0.0.9").signIn(installPath(t), USER_EMAIL, USER_PASSWORD)).status, 303);
  });

  it("ends a sign-in after eight hours: the install page asks to sign in again", async () => {
    await browser.signIn(installPath(t));
    t.clock.advance(8 * 60 * 60 * 1000 - 1);
    assert.match((await browser.get(installPath(t))).body, /Install Shop Sync for Acme/);
    t.clock.advance(1);
    const expired = await browser.get(installPath(t));
    assert.match(expired.body, /Sign in to install Shop Sync/);
    const consent = await browser.post(CONSENT, { ...hiddenFields(expired.body), decision: "authorize" });
    assert.equal(consent.status, 303);
    assert.equal(new URL(consent.headers.location!, "http://any.example").pathname, "/integrations/oauth-install", "back to sign in, not to the client");
    assert.equal(await storedCodes(t), 0);
  });

  it("refuses a consent answer that is neither Authorize nor Cancel", async () => {
    await browser.signIn(installPath(t));
    const fields = hiddenFields((await browser.get(installPath(t))).body);
    assertHtmlPage(await browser.post(CONSENT, fields), 400);
    assertHtmlPage(await browser.post(CONSENT, { ...fields, decision: "maybe" }), 400);
    assert.equal(await storedCodes(t), 0);
  });

  it("ends the sign-ins of a deleted dashboard user", async () => {
    await browser.signIn(installPath(t));
    assert.equal(await t.kit.plugin("oauth").users.delete(t.user.id), true);
    assert.match((await browser.get(installPath(t))).body, /Sign in to install/);
    assert.equal((await browser.signIn(installPath(t))).status, 401);
  });
});
