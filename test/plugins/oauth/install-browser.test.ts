// The install flow in a real browser: Debian's Chromium driven by playwright-core,
// against the kit on a real socket and a client application on another site.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import type { Page } from "playwright-core";
import { fakeClock } from "../../../adapters/clock/index.ts";
import { memoryObjectStorage } from "../../../adapters/object-storage/memory/index.ts";
import { manualScheduler } from "../../../adapters/scheduler/manual/index.ts";
import { memorySms } from "../../../adapters/sms/memory/index.ts";
import { memoryStorage } from "../../../adapters/storage/memory/index.ts";
import { accountsPlugin } from "../../../plugins/accounts/index.ts";
import { oauthPlugin } from "../../../plugins/oauth/index.ts";
import { subscriptionsPlugin } from "../../../plugins/subscriptions/index.ts";
import { createReachkit, SCOPE_DESCRIPTIONS, silentLogger, type Reachkit } from "../../../src/index.ts";
import { launchChromium, type LaunchedChromium } from "../../support/chromium.ts";
import { loopbackServer, type LoopbackServer } from "../../support/loopback-server.ts";
import { startOAuthClientApp, type OAuthClientApp } from "../../support/oauth-client-app.ts";
import { TEST_SECRET } from "../../support/test-kit.ts";

const SCREENSHOTS = resolve(import.meta.dirname, "../../../test-output/oauth-install");
const EMAIL = "owner@acme.example";
const PASSWORD = "correct horse battery";

describe("OAuth install in Chromium", () => {
  let chromium: LaunchedChromium;
  let kit: Reachkit;
  let server: LoopbackServer;
  let client: OAuthClientApp;
  const clock = fakeClock("2026-03-01T12:00:00.000Z");

  before(
    async () => {
      chromium = await launchChromium();
      client = await startOAuthClientApp();
      // The kit's public URL must name its port, so listen first and attach the kit after.
      server = await loopbackServer();
      const kitUrl = server.url;
      kit = createReachkit({
        storage: memoryStorage(),
        scheduler: manualScheduler(clock),
        clock,
        sms: memorySms(),
        objectStorage: memoryObjectStorage(),
        logger: silentLogger(),
        hosts: kitUrl,
        secret: TEST_SECRET,
        plugins: [accountsPlugin(), subscriptionsPlugin(), oauthPlugin()],
      });
      await kit.start();
      server.serve(kit);

      const acme = await kit.provisionCompany({ name: "Acme" });
      const developer = await kit.plugin("accounts").createCompany({ name: "Appmaker" });
      const oauth = kit.plugin("oauth");
      const { application, clientSecret } = await oauth.applications.create({
        companyId: developer.id,
        name: "Shop Sync",
        redirectUris: [client.redirectUri],
        scopes: ["subscriptions:read", "subscriptions:write"],
      });
      await oauth.users.create({ companyId: acme.company.id, email: EMAIL, password: PASSWORD });
      client.configure({
        kitUrl,
        clientId: application.clientId,
        clientSecret,
        installUrl: (state) => oauth.installUrl({ clientId: application.clientId, redirectUri: client.redirectUri, state }),
      });
      mkdirSync(SCREENSHOTS, { recursive: true });
    },
    { timeout: 10 * 60 * 1000 }, // a fresh machine installs Chromium first
  );

  after(async () => {
    await chromium?.close();
    await client?.close();
    await server?.close();
    await kit?.stop();
  });

  beforeEach(async () => {
    await chromium.context.clearCookies();
    client.visits.length = 0;
    client.beforeExchange = () => undefined;
  });

  /** Starts at the client, signs in on the install page, and stops on the consent page. */
  async function reachConsent(page: Page, screenshots = false): Promise<void> {
    await page.goto(`${client.url}/start`);
    await page.getByRole("heading", { name: "Sign in to install Shop Sync" }).waitFor();
    if (screenshots) await page.screenshot({ path: join(SCREENSHOTS, "login.png"), fullPage: true });
    await page.getByLabel("Email").fill(EMAIL);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Install Shop Sync for Acme?" }).waitFor();
  }

  it("signs in, shows the scopes, authorizes, and the client exchanges the code and calls /v1/me", async (t) => {
    const page = await chromium.context.newPage();
    await page.goto(`${client.url}/start`);
    await page.getByRole("heading", { name: "Sign in to install Shop Sync" }).waitFor();
    await page.getByLabel("Email").fill(EMAIL);
    await page.getByLabel("Password").fill("not the password");
    await page.getByRole("button", { name: "Sign in" }).click();
    assert.equal(await page.getByRole("alert").textContent(), "The email or password is incorrect.");

    await page.close();
    const fresh = await chromium.context.newPage();
    await reachConsent(fresh, true);
    const scopes = await fresh.getByRole("list", { name: "Requested permissions" }).getByRole("listitem").allTextContents();
    assert.deepEqual(scopes, [
      `${SCOPE_DESCRIPTIONS["subscriptions:read"]} subscriptions:read`,
      `${SCOPE_DESCRIPTIONS["subscriptions:write"]} subscriptions:write`,
    ]);
    await fresh.screenshot({ path: join(SCREENSHOTS, "consent.png"), fullPage: true });
    t.diagnostic(`screenshots of the sign-in and consent pages: ${SCREENSHOTS}`);

    await fresh.getByRole("button", { name: "Authorize" }).click();
    await fresh.getByRole("heading", { name: "Installed" }).waitFor();
    assert.equal(await fresh.locator("#message").textContent(), "Connected to Acme as Shop Sync.");
    const [visit] = client.visits;
    assert.equal(visit!.outcome, "installed");
    assert.equal(visit!.query.state, visit!.expectedState);
    assert.equal(visit!.query.authorizationCode, visit!.query.code);
    assert.equal(visit!.exchange!.status, 200);
    assert.equal(visit!.exchange!.body.token_type, "Bearer");
    assert.equal(visit!.me!.status, 200);
    assert.equal(visit!.me!.body.applicationName, "Shop Sync");
    assert.equal(visit!.me!.body.companyName, "Acme");
    await fresh.close();
  });

  it("installs when the page is opened on another origin than the public URL (its forms post to paths of the page's own origin)", async () => {
    const publicInstallUrl = client.installUrl;
    // The kit's public URL names 127.0.0.1; the browser reaches the same server as localhost.
    client.installUrl = (state) => publicInstallUrl(state).replace("//127.0.0.1:", "//localhost:");
    const page = await chromium.context.newPage();
    try {
      await reachConsent(page);
      assert.equal(new URL(page.url()).hostname, "localhost");
      await page.getByRole("button", { name: "Authorize" }).click();
      await page.getByRole("heading", { name: "Installed" }).waitFor();
      assert.equal(client.visits[0]!.me!.status, 200);
    } finally {
      client.installUrl = publicInstallUrl;
      await page.close();
    }
  });

  it("Cancel sends the browser back with error=access_denied and the client's state", async () => {
    const page = await chromium.context.newPage();
    await reachConsent(page);
    await page.getByRole("button", { name: "Cancel" }).click();
    await page.getByRole("heading", { name: "Install cancelled" }).waitFor();
    const [visit] = client.visits;
    assert.equal(visit!.query.error, "access_denied");
    assert.equal(visit!.query.state, visit!.expectedState);
    assert.equal(visit!.query.code, undefined);
    await page.close();
  });

  it("passes a tampered state back unchanged, and the client detects it", async () => {
    const page = await chromium.context.newPage();
    await reachConsent(page);
    const tampered = new URL(page.url());
    tampered.searchParams.set("state", "forged-by-someone-else");
    await page.goto(tampered.toString());
    await page.getByRole("button", { name: "Authorize" }).click();
    await page.getByRole("heading", { name: "Install refused" }).waitFor();
    const [visit] = client.visits;
    assert.equal(visit!.query.state, "forged-by-someone-else");
    assert.notEqual(visit!.expectedState, undefined);
    assert.equal(visit!.outcome, "state_mismatch");
    await page.close();
  });

  it("refuses a code used after two minutes", async () => {
    const page = await chromium.context.newPage();
    await reachConsent(page);
    client.beforeExchange = () => clock.advance(2 * 60 * 1000);
    await page.getByRole("button", { name: "Authorize" }).click();
    await page.getByRole("heading", { name: "Install failed" }).waitFor();
    const [visit] = client.visits;
    assert.equal(visit!.exchange!.status, 400);
    assert.equal(visit!.exchange!.body.error, "invalid_grant");
    assert.equal(visit!.me, undefined);
    await page.close();
  });
});
