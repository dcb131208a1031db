// The API reference page in a real browser: Debian's Chromium driven by
// playwright-core, against the kit on a real socket.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Reachkit } from "../../src/index.ts";
import { launchChromium, type LaunchedChromium } from "../support/chromium.ts";
import { loopbackServer, type LoopbackServer } from "../support/loopback-server.ts";
import { startServerPluginsKit } from "../support/openapi-kit.ts";
import type { Json } from "../support/test-kit.ts";

const SCREENSHOTS = resolve(import.meta.dirname, "../../test-output/api-reference");

describe("the API reference page in Chromium", () => {
  let chromium: LaunchedChromium;
  let kit: Reachkit;
  let server: LoopbackServer;
  let kitUrl: string;

  before(
    async () => {
      chromium = await launchChromium();
      server = await loopbackServer();
      kitUrl = server.url;
      kit = await startServerPluginsKit(kitUrl);
      server.serve(kit);
      mkdirSync(SCREENSHOTS, { recursive: true });
    },
    { timeout: 10 * 60 * 1000 }, // a fresh machine installs Chromium first
  );

  after(async () => {
    await chromium?.close();
    await kit?.stop();
    await server?.close();
  });

  it("lists every operation by name, with its example, loading nothing from another site and breaking no CSP rule", async () => {
    const document = (await kit.inject({ url: "/openapi.json" })).json<Json>();
    const summaries = Object.values(document.paths as Record<string, Json>).flatMap((item) =>
      ["get", "post", "put", "patch", "delete"].filter((method) => item[method]).map((method) => item[method].summary as string),
    );
    const page = await chromium.context.newPage();
    const foreignRequests: string[] = [];
    const problems: string[] = [];
    page.on("request", (request) => {
      if (!request.url().startsWith(kitUrl) && !request.url().startsWith("data:")) foreignRequests.push(request.url());
    });
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    page.on("pageerror", (error) => problems.push(error.message));
    try {
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.goto(`${kitUrl}/docs`);
      await page.getByText("Create subscriptions", { exact: true }).waitFor({ timeout: 30_000 });

      assert.equal(await page.title(), "reachkit API reference");
      assert.ok(await page.getByRole("heading", { name: /reachkit API/ }).isVisible());
      const shown = await page.locator(".opblock-summary-description").allTextContents();
      assert.deepEqual([...shown].sort(), [...summaries].sort());
      for (const tag of ["Subscriptions", "Product catalog", "Appointment reminders", "Legacy subscribers and messages"]) {
        assert.ok(await page.locator(".opblock-tag", { hasText: tag }).first().isVisible(), tag);
      }
      await page.screenshot({ path: join(SCREENSHOTS, "docs.png") });

      // One operation opened: its scopes, its example body and its statuses as a user reads them.
      const optIn = page.locator(".opblock", { hasText: "Create subscriptions" }).first();
      await optIn.locator(".opblock-summary").click();
      await optIn.locator(".body-param__example, .example").first().waitFor();
      const text = await optIn.innerText();
      assert.match(text, /"phone": "\+13125550100"/);
      for (const status of ["202", "400", "401", "403", "429"]) assert.match(text, new RegExp(`\\b${status}\\b`), status);
      await optIn.screenshot({ path: join(SCREENSHOTS, "create-subscriptions.png") });

      assert.deepEqual(foreignRequests, []);
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  });
});
