// The console in a real browser: Debian's Chromium driven by playwright-core against the
// kit on a real socket. It signs in, goes through every page and main action, keeps
// screenshots at desktop and phone widths, and checks each page with axe-core.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Page } from "playwright-core";
import type { ManualScheduler } from "../../../adapters/scheduler/manual/index.ts";
import type { Reachkit } from "../../../src/index.ts";
import { launchChromium, type LaunchedChromium } from "../../support/chromium.ts";
import { loopbackServer, type LoopbackServer } from "../../support/loopback-server.ts";
import { startServerPluginsKitWith } from "../../support/openapi-kit.ts";
import type { Json } from "../../support/test-kit.ts";
import { Receiver } from "../webhooks/support.ts";
import { consolePlugins, OWNER, PASSWORD, VIEWER } from "./support.ts";
import { CATALOG_FILE, seedConsoleWorld, type ConsoleWorld } from "./world.ts";

const SCREENSHOTS = resolve(import.meta.dirname, "../../../test-output/console");
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const WIDTHS = { desktop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } } as const;

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

describe("the console in Chromium", () => {
  let chromium: LaunchedChromium;
  let kit: Reachkit;
  let server: LoopbackServer;
  let url: string;
  let world: ConsoleWorld;
  let page: Page;
  let scheduler: ManualScheduler;
  let receiver: Receiver;
  let apiKey: string;
  /** Console errors and CSP refusals of every page: none may happen. */
  const problems: string[] = [];
  const foreignRequests: string[] = [];

  /** The page checked by axe-core: no serious or critical violation. */
  async function accessible(name: string): Promise<void> {
    await page.evaluate(AXE);
    const violations = (await page.evaluate("axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)")) as AxeViolation[];
    const severe = violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical");
    assert.deepEqual(
      severe.map((violation) => `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`),
      [],
      `${name}: accessibility`,
    );
  }

  /** Screenshots at both widths, and the accessibility check. */
  async function capture(name: string): Promise<void> {
    await accessible(name);
    for (const [width, size] of Object.entries(WIDTHS)) {
      await page.setViewportSize(size);
      await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}.png`), fullPage: true });
    }
    await page.setViewportSize(WIDTHS.desktop);
  }

  before(
    async () => {
      chromium = await launchChromium();
      server = await loopbackServer();
      url = server.url;
      // The seed makes two uploads in one fake second.
      const started = await startServerPluginsKitWith(url, { plugins: consolePlugins(), config: { rateLimits: { "catalog-upload": Infinity } } });
      ({ kit, scheduler } = started);
      server.serve(kit);
      const company = (await kit.provisionCompany({ name: "Acme Outfitters" })).output as Json;
      world = await seedConsoleWorld(kit, started.sms, company, scheduler);
      apiKey = company.apiKey;
      receiver = await Receiver.start();
      receiver.answer = () => ({ status: 200, body: '{"status":"success"}' });
      const users = kit.plugin("oauth").users;
      await users.create({ companyId: company.companyId, email: OWNER, password: PASSWORD });
      await users.create({ companyId: company.companyId, email: VIEWER, password: PASSWORD, role: "viewer" });
      mkdirSync(SCREENSHOTS, { recursive: true });
      page = await chromium.context.newPage();
      page.on("console", (message) => {
        if (message.type() === "error") problems.push(message.text());
      });
      page.on("pageerror", (error) => problems.push(error.message));
      page.on("request", (request) => {
        if (!request.url().startsWith(url) && !request.url().startsWith("data:")) foreignRequests.push(request.url());
      });
      await page.setViewportSize(WIDTHS.desktop);
    },
    { timeout: 10 * 60 * 1000 }, // a fresh machine installs Chromium first
  );

  after(async () => {
    await chromium?.close();
    await kit?.stop();
    await server?.close();
    await receiver?.close();
  });

  const api = async (method: string, path: string, body?: unknown) => {
    const answer = await kit.inject({ method, url: path, body, headers: { authorization: `Bearer ${apiKey}` } });
    assert.ok(answer.status < 300, `${path}: ${answer.status} ${answer.body}`);
    return answer.body ? answer.json<Json>() : {};
  };

  it("sends a visitor to the sign-in form, refuses a wrong password, and signs the owner in to the overview's charts", async () => {
    await page.goto(`${url}/console/messages`);
    assert.equal(new URL(page.url()).pathname, "/console/sign-in");
    await capture("sign-in");
    await page.getByLabel("Email").fill(OWNER);
    await page.getByLabel("Password").fill("not the password");
    await page.getByRole("button", { name: "Sign in" }).click();
    assert.equal(await page.getByRole("alert").textContent(), "The email or password is incorrect.");
    // The form came back with 401, which Chromium reports as an error; it is the only one expected.
    assert.deepEqual(problems.splice(0), ["Failed to load resource: the server responded with a status of 401 (Unauthorized)"]);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${url}/console/messages`);
    await page.getByRole("link", { name: "Overview" }).click();
    await page.waitForURL(`${url}/console`);
    // uPlot drew every chart on a canvas.
    await page.locator("[data-chart] canvas").first().waitFor();
    assert.equal(await page.locator("[data-chart] canvas").count(), 3);
    // Four people opted in by phone and email: eight subscriptions.
    assert.match(await page.locator("main").innerText(), /Opt-ins\s+8/);
    await capture("overview");
  });

  it("searches subscribers and opens a person's consent history and messages", async () => {
    await page.getByRole("link", { name: "Subscribers" }).click();
    await page.getByLabel("Phone, email or id").fill("+13125550103");
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByRole("link", { name: "+13125550103" }).click();
    await page.getByRole("heading", { name: /Edsger Dijkstra/ }).waitFor();
    const history = await page.getByRole("table", { name: "Consent history" }).innerText();
    assert.match(history, /opt in/);
    assert.match(history, /unsubscribed/);
    // Opted out before the welcome journey's text was due: skipped, for want of consent.
    assert.match(await page.getByRole("table", { name: "Journeys" }).innerText(), /Welcome\s+skipped[\s\S]*no consent/);
    await capture("subscriber");
    await page.getByRole("link", { name: "Subscribers" }).click();
    assert.equal(await page.locator("tbody tr").count(), 4);
    await capture("subscribers");
  });

  it("filters the messages to the failed ones, with the provider's error", async () => {
    await page.getByRole("link", { name: "Messages" }).click();
    await page.getByLabel("Status").selectOption("failed");
    await page.getByRole("button", { name: "Filter" }).click();
    const rows = page.locator("tbody tr");
    assert.equal(await rows.count(), 1);
    assert.match(await rows.innerText(), /not a valid phone number/);
    assert.match(await rows.innerText(), new RegExp(world.failingPhone.replace("+", "\\+")));
    await capture("messages");
    await page.getByLabel("Status").selectOption("undelivered");
    await page.getByRole("button", { name: "Filter" }).click();
    assert.match(await page.locator("tbody tr").innerText(), /undelivered\s+30005/);
    await page.getByLabel("Status").selectOption("");
    await page.getByLabel(/^To/).fill(world.emails[0]!);
    await page.getByRole("button", { name: "Filter" }).click();
    assert.match(await page.locator("tbody tr").innerText(), /email\s+receipt\s+sent[\s\S]*Your receipt/);
    await page.getByLabel(/^To/).fill("");
    await page.getByRole("button", { name: "Filter" }).click();
    await capture("messages-all");
  });

  it("lists the journeys with their results, opens one, pauses and resumes it", async () => {
    await page.getByRole("link", { name: "Journeys" }).click();
    assert.match(await page.getByRole("table", { name: "Journeys" }).innerText(), /Welcome\s+welcome\s+active\s+4\s+3\s+1\s+1\s+24\.50 USD/);
    await capture("journeys");
    await page.getByRole("link", { name: "Welcome" }).click();
    await page.getByRole("table", { name: "Skipped, by reason" }).waitFor();
    await capture("journey");
    await page.getByRole("button", { name: "Pause the journey" }).click();
    await page.getByRole("status").filter({ hasText: "The journey is paused" }).waitFor();
    await page.getByRole("button", { name: "Resume the journey" }).click();
    await page.getByRole("status").filter({ hasText: "The journey runs again" }).waitFor();
    assert.equal((await kit.plugin("journeys").get(world.companyId, world.journeyId))?.status, "active");
  });

  it("lists the campaigns, opens a sent one's results per variant, a segment's count, and cancels a scheduled one", async () => {
    const segment = await api("POST", "/v1/segments", { name: "Text subscribers", rule: { consent: { channel: "TEXT", type: "MARKETING", state: "active" } } });
    const sale = await api("POST", "/v1/campaigns", { name: "Spring sale", segmentId: segment.id, channel: "sms", link: "https://shop.example/sale", variants: [{ name: "Short", text: "Sale today {link}" }, { name: "Long", text: "Our spring sale starts today: {link}" }] });
    await api("POST", `/v1/campaigns/${sale.id}/send`, {});
    await scheduler.flush();
    await scheduler.flush();
    const later = await api("POST", "/v1/campaigns", { name: "Summer preview", segmentId: segment.id, channel: "sms", text: "Summer is coming to {companyName}" });
    await api("POST", `/v1/campaigns/${later.id}/send`, { sendAt: "2026-06-01T15:00:00Z" });
    await page.getByRole("link", { name: "Campaigns", exact: true }).click();
    assert.match(await page.getByRole("table", { name: "Campaigns" }).innerText(), /Spring sale\s+sms\s+sent/);
    await capture("campaigns");
    await page.getByRole("link", { name: "Spring sale" }).click();
    assert.match(await page.getByRole("table", { name: "Results" }).innerText(), /Audience(\s+\d){2}\s+3\s+Sent(\s+\d){2}\s+3\s/);
    await capture("campaign");
    await page.getByRole("link", { name: "Text subscribers" }).click();
    await page.getByText("People now").waitFor();
    assert.match(await page.locator("main").innerText(), /People now\s+3/);
    await capture("segment");
    await page.getByRole("link", { name: "All segments" }).click();
    await capture("segments");
    await page.getByRole("link", { name: "Campaigns", exact: true }).click();
    await page.getByRole("link", { name: "Summer preview" }).click();
    await page.getByRole("button", { name: "Cancel the campaign" }).click();
    await page.getByRole("status").filter({ hasText: "The campaign is cancelled" }).waitFor();
    assert.equal((await kit.plugin("campaigns").get(world.companyId, String(later.id)))?.status, "cancelled");
  });

  it("lists the webhooks, opens one's delivery log and sends a delivery again", async () => {
    const webhook = await api("POST", "/v1/webhooks", { url: receiver.url, events: ["custom_attribute.set", "sms.subscribed"] });
    await api("POST", "/v1/attributes/custom", { properties: { tier: "silver" }, user: { phone: world.phones[1] } });
    await scheduler.flush();
    await page.getByRole("link", { name: "Webhooks", exact: true }).click();
    assert.match(await page.getByRole("table", { name: "Webhooks" }).innerText(), /custom_attribute\.set[\s\S]*enabled[\s\S]*delivered/);
    await capture("webhooks");
    await page.getByRole("link", { name: receiver.url }).click();
    const [delivery] = await kit.plugin("webhooks").deliveries.log(String(webhook.id));
    assert.match(await page.getByRole("table", { name: "Delivery log" }).innerText(), /custom_attribute\.set\s+delivered\s+1\s+200/);
    await page.getByRole("button", { name: `Send again ${delivery!.id}` }).click();
    await page.getByRole("status").filter({ hasText: "The delivery was sent again" }).waitFor();
    assert.match(await page.getByRole("table", { name: "Delivery log" }).innerText(), /custom_attribute\.set\s+delivered\s+2\s+200/);
    assert.equal(receiver.requests.length, 2);
    await capture("webhook");
  });

  it("starts a catalog upload, sends the file from the page, follows its progress, and shows the errors by line", async () => {
    await page.getByRole("link", { name: "Catalog uploads" }).click();
    await page.getByRole("link", { name: world.uploadId }).waitFor();
    await capture("catalog");
    await page.getByRole("button", { name: "New upload" }).click();
    await page.getByRole("heading", { name: "Send the file" }).waitFor();
    await capture("catalog-new-upload");
    await page.getByLabel(/Catalog file/).setInputFiles({ name: "catalog.ndjson", mimeType: "application/x-ndjson", buffer: Buffer.from(CATALOG_FILE) });
    await page.getByRole("button", { name: "Send file" }).click();
    await page.getByText("Processing the file").waitFor();
    await capture("catalog-processing");
    // The kit's jobs run when the test says (manual scheduler); the page notices by itself.
    await scheduler.flush();
    await page.getByRole("table", { name: "Errors by line" }).waitFor({ timeout: 15_000 });
    const errors = await page.getByRole("table", { name: "Errors by line" }).innerText();
    assert.match(errors, /^2\s/m);
    assert.match(errors, /^3\s/m);
    assert.match(await page.locator("main").innerText(), /Status\s+completed/);
    await capture("catalog-upload");
  });

  it("finds a product and shows its variant's stock and price history", async () => {
    await page.getByRole("link", { name: "Products" }).click();
    await page.getByLabel(/Product id/).fill(world.productId);
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByRole("link", { name: world.productId }).click();
    const history = await page.getByRole("table", { name: `History of ${world.productId}-s` }).innerText();
    assert.match(history, /19\.00 USD · stock 12\s+15\.00 USD · stock 3/);
    await capture("product");
  });

  it("opens a reminder with its steps and cancels it", async () => {
    await page.getByRole("link", { name: "Reminders" }).click();
    await page.locator(`a[href$="/reminders/${world.reminderUuid}"]`).first().click();
    await page.getByRole("table", { name: "Steps" }).waitFor();
    await capture("reminder");
    await page.getByRole("button", { name: "Cancel the appointment" }).click();
    await page.getByText("canceled").first().waitFor();
    assert.equal(await page.getByRole("button", { name: "Cancel the appointment" }).count(), 0);
  });

  it("files a privacy request", async () => {
    await page.getByRole("link", { name: "Privacy requests" }).click();
    await page.getByLabel("Email").fill("leaving@example.com");
    await page.getByRole("button", { name: "Delete this person's data" }).click();
    await page.getByRole("status").filter({ hasText: "The request is recorded" }).waitFor();
    assert.equal(await page.locator("tbody tr").count(), 2);
    await capture("privacy");
  });

  it("sets the sending rules, refusing a time zone that is not one", async () => {
    await page.getByRole("link", { name: "Settings" }).click();
    await page.getByLabel(/^Time zone/).fill("Mars/Olympus_Mons");
    await page.getByRole("button", { name: "Save the sending rules" }).click();
    assert.match(await page.locator("main").innerText(), /timeZone\s*: must be an IANA time zone/);
    assert.deepEqual(problems.splice(0), ["Failed to load resource: the server responded with a status of 400 (Bad Request)"]);
    await page.getByRole("link", { name: "Settings" }).click();
    await page.getByLabel(/^Time zone/).fill("America/Chicago");
    await page.getByLabel(/^Quiet from/).fill("21:00");
    await page.getByLabel(/^Marketing messages per person/).fill("2");
    await page.getByRole("button", { name: "Save the sending rules" }).click();
    await page.getByRole("status").filter({ hasText: "The sending rules are saved" }).waitFor();
    assert.deepEqual(await kit.plugin("sendRules").policies.get(world.companyId), { timeZone: "America/Chicago", quietHours: { start: "21:00", end: "11:00" }, dailyCap: 2 });
  });

  it("creates an API key shown once, and adds a viewer", async () => {
    await page.getByRole("link", { name: "Settings" }).click();
    await page.getByLabel("New application's name").fill("Storefront sync");
    await page.getByRole("button", { name: "Create an API key" }).click();
    const secret = await page.locator(".secret code").textContent();
    assert.match(secret ?? "", /^rk_/);
    const me = await kit.inject({ url: "/v1/me", headers: { authorization: `Bearer ${secret}` } });
    assert.equal(me.status, 200, "the key works");
    await page.getByLabel("Email", { exact: true }).fill("support@acme.example");
    await page.getByLabel(/Password/).fill("a long enough password");
    await page.getByRole("button", { name: "Add a user" }).click();
    await page.getByText("The user is created").waitFor();
    assert.match(await page.getByRole("table", { name: "Dashboard users" }).innerText(), /support@acme\.example\s+viewer/);
    await capture("settings");
  });

  it("signs out, and a viewer sees the pages without their forms, keys or users", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/console\/sign-in$/);
    await page.goto(`${url}/console/sign-in`);
    await page.getByLabel("Email").fill(VIEWER);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${url}/console`);
    await page.getByRole("link", { name: "Settings" }).click();
    assert.equal(await page.getByRole("table", { name: "API keys and tokens" }).count(), 0);
    assert.equal(await page.getByRole("button", { name: /Set the sender number|Add a user|Create an API key/ }).count(), 0);
    await capture("settings-viewer");
    await page.getByRole("link", { name: "Catalog uploads" }).click();
    assert.equal(await page.getByRole("button", { name: "New upload" }).count(), 0);
    await page.getByRole("link", { name: "Webhooks", exact: true }).click();
    await page.getByRole("link", { name: receiver.url }).click();
    await page.getByRole("table", { name: "Delivery log" }).waitFor();
    assert.equal(await page.getByRole("button", { name: /Send again|Disable the webhook/ }).count(), 0);
    await page.getByRole("link", { name: "Campaigns", exact: true }).click();
    assert.equal(await page.getByRole("button", { name: "Create a draft" }).count(), 0);
  });

  it("loaded nothing from another site and broke no CSP rule on any page", () => {
    assert.deepEqual(foreignRequests, []);
    assert.deepEqual(problems, []);
  });
});
