import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { InjectResponse } from "../../../src/index.ts";
import type { TestKit } from "../../support/test-kit.ts";
import { pageText as text, ConsoleBrowser, OWNER, signedIn, startConsoleKit } from "./support.ts";
import { CONSOLE_REQUESTS, SESSION_ROUTES, signedInConsole, type ConsoleFixture } from "./requests.ts";

const isConsole = (path: string) => path === "/console" || path.startsWith("/console/");

function assertPage(response: InjectResponse, status = 200): void {
  assert.equal(response.status, status, response.body.slice(0, 500));
  assert.equal(response.headers["content-type"], "text/html; charset=utf-8");
  const csp = response.headers["content-security-policy"] ?? "";
  for (const rule of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "form-action 'self'"]) assert.ok(csp.includes(rule), `${rule} in ${csp}`);
  assert.equal(response.headers["x-frame-options"], "DENY");
  assert.equal(response.headers["cache-control"], "no-store");
}


describe("console pages", () => {
  let t: TestKit;
  let f: ConsoleFixture;
  let owner: ConsoleBrowser;
  let viewer: ConsoleBrowser;

  before(async () => ({ t, f, owner, viewer } = await signedInConsole()));
  after(() => t.stop());

  it("has a request in the table for every console route, and none for a route the kit lacks", () => {
    const served = t.kit.http.routes.filter((route) => route.host === "ui" && isConsole(route.path)).map((route) => `${route.method} ${route.path}`);
    assert.deepEqual(served.filter((key) => !(key in CONSOLE_REQUESTS)), []);
    assert.deepEqual(Object.keys(CONSOLE_REQUESTS).filter((key) => !served.includes(key)), []);
  });

  it("sends a browser that is not signed in to the sign-in page from every page and action, and answers the progress poll 401", async () => {
    const stranger = new ConsoleBrowser(t.kit);
    for (const [key, make] of Object.entries(CONSOLE_REQUESTS)) {
      if (SESSION_ROUTES.includes(key)) continue;
      const request = await make(f);
      const answer = request.method === "GET" ? await stranger.get(request.url) : await stranger.post(request.url, { ...request.fields, csrf_token: "x" });
      if (key.endsWith("/progress")) {
        assert.equal(answer.status, 401, key);
        continue;
      }
      assert.equal(answer.status, 303, `${key}: ${answer.body.slice(0, 200)}`);
      assert.match(answer.headers.location ?? "", /^\/console\/sign-in/, key);
    }
    const deep = await stranger.get("/console/messages?status=failed");
    assert.equal(deep.headers.location, "/console/sign-in?next=%2Fconsole%2Fmessages");
  });

  it("answers every page to owners and viewers as HTML under a strict CSP", async () => {
    for (const [key, make] of Object.entries(CONSOLE_REQUESTS)) {
      if (!key.startsWith("GET ") || SESSION_ROUTES.includes(key) || key.endsWith("/progress")) continue;
      const request = await make(f);
      for (const browser of [owner, viewer]) assertPage(await browser.get(request.url));
    }
  });

  it("overview: totals, and each chart's numbers as a table and as JSON for the chart", async () => {
    const page = await owner.get("/console?days=7");
    assertPage(page);
    const shown = text(page);
    assert.match(shown, /Opt-ins 8 /);
    assert.match(shown, /Opt-outs 1 /);
    // 9 sent without a receipt, 1 delivered and 1 undelivered by receipt, 1 refused: 10 of 12 reached their recipient.
    assert.match(shown, /Messages sent 11 /);
    assert.match(shown, /Delivery rate 83\.3% /);
    assert.match(shown, /Of the 11 sent, receipts say 1 delivered and 1 undelivered\./);
    assert.match(shown, /7 days/);
    const charts = [...page.body.matchAll(/<script type="application\/json">([^<]*)<\/script>/g)].map((match) => JSON.parse(match[1]!));
    assert.deepEqual(charts.map((chart) => chart.series), [["Opt-ins", "Opt-outs"], ["Delivered", "Sent", "Undelivered", "Failed", "Queued", "Suppressed"], ["Uploads"]]);
    assert.deepEqual(charts[1].values.map((values: number[]) => values.at(-1)), [1, 9, 1, 1, 0, 0]);
    assert.equal(charts[0].days.length, 7);
    assert.deepEqual(charts[0].values.map((values: number[]) => values.at(-1)), [8, 1]);
    assert.equal((await owner.get("/console?days=365")).body.includes("<strong aria-current=\"true\">30 days</strong>"), true, "an unknown period is 30 days");
  });

  it("subscribers: searches by phone digits, email and id; a person shows their subscriptions, consent history, messages and reminders", async () => {
    const byDigits = text(await owner.get("/console/subscribers?q=%2B1%20(312)%20555-0102"));
    assert.ok(byDigits.includes(f.world.phones[2]!) && !byDigits.includes(f.world.phones[0]!));
    const byEmail = text(await owner.get("/console/subscribers?q=GRACE"));
    assert.ok(byEmail.includes("grace@example.com") && !byEmail.includes("ada@example.com"));
    const person = await owner.get(`/console/subscriber?phone=${encodeURIComponent(f.world.phones[0]!)}`);
    assertPage(person);
    const shown = text(person);
    for (const expected of ["Ada Lovelace", "ada@example.com", "u-0", "MARKETING", "opt in", "has shipped", "welcome_marketing", "scheduled"]) assert.ok(shown.includes(expected), expected);
    // The profile: its identifiers, the attribute and the event recorded through the API.
    assert.match(shown, /Attributes Name Value Type Set tier gold string /);
    assert.match(shown, /Events When Event 2026-03-01 17:00 UTC purchase · Mug 2026-03-01 12:00 UTC Order Shipped · \{"orderId":"1001"\}/);
    // Texts to the phone and emails to the address, newest first.
    assert.match(shown, /Messages When Channel What Status Text 2026-03-01 17:00 UTC email receipt sent Your receipt Thanks for your order\. 2026-03-01 16:00 UTC sms journey sent Welcome to Acme texts, Ada! 2026-03-01 12:00 UTC sms transactional delivered /);
    assert.match(shown, /Identifiers Identifier Value Linked .*clientUserId u-0/);
    assert.equal((await owner.get("/console/subscriber?email=ADA%40example.com")).status, 200, "by email, in any case");
    assertPage(await owner.get("/console/subscriber?phone=%2B19995550100"), 404);
    assertPage(await owner.get("/console/subscriber"), 404);
  });

  it("subscribers: pages of 50 with a Next link that continues where the last page ended", async () => {
    const fresh = await startConsoleKit();
    try {
      for (let n = 0; n < 55; n++) {
        await fresh.request({ method: "POST", url: "/v1/subscriptions", body: { user: { phone: `+1415555${String(n).padStart(4, "0")}` }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING", singleOptIn: true } });
        fresh.clock.advance(1000);
        await fresh.scheduler.flush();
      }
      const browser = await signedIn(fresh.kit, OWNER);
      const first = await browser.get("/console/subscribers");
      const rows = (page: InjectResponse) => [...page.body.matchAll(/>(\+1415555\d{4})</g)].map((match) => match[1]);
      assert.equal(rows(first).length, 50);
      assert.equal(rows(first)[0], "+14155550054", "newest first");
      const next = /href="([^"]+)" rel="next"/.exec(first.body)?.[1]?.replace(/&amp;/g, "&");
      assert.ok(next);
      const second = await browser.get(next);
      assert.deepEqual(rows(second), ["+14155550004", "+14155550003", "+14155550002", "+14155550001", "+14155550000"]);
      assert.equal(/rel="next"/.test(second.body), false);
      const edited = await browser.get("/console/subscribers?after=bm90IGEgY3Vyc29y");
      assertPage(edited, 400);
      assert.match(text(edited), /Page link out of date/);
    } finally {
      await fresh.stop();
    }
  });

  it("messages: filters by status and recipient, with the provider's error code and reason of each failure, texts and emails", async () => {
    const failed = text(await owner.get("/console/messages?status=failed"));
    assert.ok(failed.includes("21211 The 'To' number is not a valid phone number"), failed);
    assert.ok(failed.includes(f.world.failingPhone) && !failed.includes(f.world.phones[0]!));
    const toOne = text(await owner.get(`/console/messages?to=${encodeURIComponent(f.world.phones[1]!)}`));
    assert.ok(toOne.includes(`Your order to ${f.world.phones[1]} has shipped.`) && !toOne.includes(`Your order to ${f.world.phones[0]}`));
    assert.ok(text(await owner.get("/console/messages?status=nonsense")).includes(`Your order to ${f.world.phones[0]}`), "an unknown status filters nothing");
    const undelivered = text(await owner.get("/console/messages?status=undelivered"));
    assert.match(undelivered, new RegExp(`\\${f.world.phones[1]} sms transactional undelivered 30005 Acme: Your order to \\${f.world.phones[1]} has shipped\\.`));
    assert.ok(!undelivered.includes(`Your order to ${f.world.phones[0]}`));
    assert.match(text(await owner.get("/console/messages?status=delivered")), new RegExp(`\\${f.world.phones[0]} sms transactional delivered .* delivered 2026-03-01 17:00 UTC`));
    const emails = text(await owner.get(`/console/messages?to=${encodeURIComponent(f.world.emails[0]!)}`));
    assert.match(emails, /ada@example\.com email receipt sent Your receipt Thanks for your order\./);
    assert.ok(!emails.includes("has shipped"));
  });

  it("catalog: an upload's errors by line and counts, and its progress as JSON", async () => {
    const page = text(await owner.get(`/console/catalog/uploads/${f.world.uploadId}`));
    assert.match(page, /Status completed/);
    assert.match(page, /Products read 3 /);
    assert.match(page, /Products valid 1 /);
    assert.match(page, / 2 invalid_json /i);
    assert.match(page, / 3 [a-z_]+ .*variants/i);
    const progress = await owner.get(`/console/catalog/uploads/${f.world.uploadId}/progress`);
    assert.equal(progress.status, 200);
    assert.deepEqual({ ...progress.json<Record<string, unknown>>(), lastUpdated: "" }, { status: "completed", productsReceived: 3, productsProcessed: 1, errors: 3, lastUpdated: "" });
    assertPage(await owner.get("/console/catalog/uploads/nope"), 404);
    assert.equal((await owner.get("/console/catalog/uploads/nope/progress")).status, 404);
  });

  it("products: search by id beginning or variant id; a product's variants with their stock and price history", async () => {
    const found = text(await owner.get(`/console/products?q=${f.world.productId.slice(0, 5)}`));
    assert.match(found, new RegExp(`${f.world.productId} Classic tee 1 1 `));
    assert.match(text(await owner.get(`/console/products?q=${f.world.productId}-s`)), new RegExp(`${f.world.productId} Classic tee`), "by a variant's id");
    assert.match(text(await owner.get("/console/products?q=nothing")), /No product matches/);
    const page = text(await owner.get(`/console/products/${f.world.productId}`));
    assert.match(page, /Variants Variant Name Prices Stock Availability .*-s Classic tee, small 15\.00 USD 3 for sale/);
    assert.match(page, /History of .*-s When Before After Upload 2026-03-01 12:00 UTC 19\.00 USD · stock 12 15\.00 USD · stock 3 /);
    assertPage(await owner.get("/console/products/nope"), 404);
  });

  it("reminders: a reminder's steps; an unknown one is a not-found page", async () => {
    const page = text(await owner.get(`/console/reminders/${f.world.reminderUuid}`));
    assert.match(page, /CONFIRMATION .*REMINDER scheduled/);
    assert.match(page, /Cancel the appointment/);
    assert.ok(!text(await viewer.get(`/console/reminders/${f.world.reminderUuid}`)).includes("Cancel the appointment"), "a viewer has no action buttons");
    assertPage(await owner.get("/console/reminders/nope"), 404);
  });
});
