import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { serverPluginsWithFastPasswords } from "../../support/openapi-kit.ts";
import { startTestKit } from "../../support/test-kit.ts";
import { signedInConsole, type SignedInConsole } from "./requests.ts";
import { pageText as text, PASSWORD, signedIn, OWNER } from "./support.ts";

describe("console journeys and sending rules", () => {
  let c: SignedInConsole;
  before(async () => (c = await signedInConsole()));
  after(() => c.t.stop());

  it("lists the company's journeys with their results: entered, sent, skipped, purchases and order totals", async () => {
    const page = await c.viewer.get("/console/journeys");
    assert.equal(page.status, 200);
    // Four opted in; Edsger had opted out when his text was due; Ada bought a 24.50 USD mug after hers.
    assert.match(text(page), /Journey Trigger Status Entered Sent Skipped Purchases Order totals Welcome welcome active 4 3 1 1 24\.50 USD /);
  });

  it("shows a journey's definition and results by reason; owners get pause and delete, viewers neither", async () => {
    const url = `/console/journeys/${c.f.world.journeyId}`;
    const shown = text(await c.owner.get(url));
    assert.match(shown, /Status active Trigger welcome Template welcome /);
    assert.match(shown, /Steps # Step What 1 wait PT1H 2 sms Welcome to \{companyName\} texts, \{firstName\}! /);
    assert.match(shown, /Entered 4 Sent 3 Deferred for quiet hours 3 Skipped 1 Purchases 1 Order totals 24\.50 USD /);
    assert.match(shown, /Skipped, by reason Reason People no consent 1 frequency cap 0 /);
    assert.ok(shown.includes("Pause the journey") && shown.includes("Delete the journey"));
    const read = text(await c.viewer.get(url));
    assert.ok(read.includes("Entered 4") && !read.includes("Pause the journey") && !read.includes("Delete the journey"));
    assert.equal((await c.owner.get("/console/journeys/nope")).status, 404);
  });

  it("pauses, resumes and deletes a journey as the API does", async () => {
    const journeys = c.t.kit.plugin("journeys");
    const id = await c.f.journey();
    const paused = await c.owner.act(`/console/journeys/${id}/pause`);
    assert.equal(paused.headers.location, `/console/journeys/${id}?done=paused`);
    assert.equal((await journeys.get(c.f.world.companyId, id))?.status, "paused");
    assert.match(text(await c.owner.get(paused.headers.location!)), /The journey is paused.*Resume the journey/);
    await c.owner.act(`/console/journeys/${id}/resume`);
    assert.equal((await journeys.get(c.f.world.companyId, id))?.status, "active");
    const deleted = await c.owner.act(`/console/journeys/${id}/delete`);
    assert.equal(deleted.headers.location, "/console/journeys?done=deleted");
    assert.equal(await journeys.get(c.f.world.companyId, id), undefined);
    assert.equal((await c.owner.get(`/console/journeys/${id}`)).status, 404);
    assert.equal((await c.viewer.act(`/console/journeys/${c.f.world.journeyId}/pause`)).status, 403);
    assert.equal((await journeys.get(c.f.world.companyId, c.f.world.journeyId))?.status, "active");
  });

  it("shows on a person's page the journeys they are or were in", async () => {
    const ada = text(await c.viewer.get(`/console/subscriber?phone=${encodeURIComponent(c.f.world.phones[0]!)}`));
    assert.match(ada, /Journeys Journey Product State Step Entered Last message Why it ended Welcome completed 2026-03-01 12:00 UTC 2026-03-01 16:00 UTC /);
    const edsger = text(await c.viewer.get(`/console/subscriber?phone=${encodeURIComponent(c.f.world.phones[3]!)}`));
    assert.match(edsger, /Welcome skipped 2026-03-01 12:00 UTC no consent /);
  });

  it("settings: shows the sending rules, and an owner changes them with the checks of reachkit send-rules set", async () => {
    const policies = c.t.kit.plugin("sendRules").policies;
    assert.match(text(await c.viewer.get("/console/settings")), /Sending rules Time zone America\/New_York Quiet hours 20:00 to 11:00, in each person's time zone Daily cap 3 marketing messages per person per local day/);
    assert.ok(!(await c.viewer.get("/console/settings")).body.includes('action="/console/settings/send-rules"'), "a viewer has no form");
    const set = await c.owner.act("/console/settings/send-rules", { timeZone: "America/Chicago", quiet: "on", quietStart: "21:00", quietEnd: "09:00", dailyCap: "2" }, "/console/settings");
    assert.equal(set.status, 303);
    assert.deepEqual(await policies.get(c.f.world.companyId), { timeZone: "America/Chicago", quietHours: { start: "21:00", end: "09:00" }, dailyCap: 2 });
    assert.match(text(await c.owner.get(set.headers.location!)), /The sending rules are saved\..*Quiet hours 21:00 to 09:00/);
    for (const [fields, path] of [
      [{ timeZone: "Mars/Olympus_Mons", dailyCap: "2" }, "timeZone"],
      [{ timeZone: "America/Chicago", quiet: "on", quietStart: "25:00", quietEnd: "09:00" }, "quietHours.start"],
      [{ timeZone: "America/Chicago", dailyCap: "0" }, "dailyCap"],
      [{ timeZone: "America/Chicago", dailyCap: "101" }, "dailyCap"],
      [{ timeZone: "America/Chicago", dailyCap: "two" }, "dailyCap"],
    ] as const) {
      const refused = await c.owner.act("/console/settings/send-rules", fields, "/console/settings");
      assert.equal(refused.status, 400, JSON.stringify(fields));
      assert.ok(text(refused).includes(`${path} : must`), `${path} named: ${text(refused).slice(-300)}`);
    }
    assert.deepEqual(await policies.get(c.f.world.companyId), { timeZone: "America/Chicago", quietHours: { start: "21:00", end: "09:00" }, dailyCap: 2 }, "nothing changed by a refusal");
    await c.owner.act("/console/settings/send-rules", { timeZone: "America/Chicago", dailyCap: "" }, "/console/settings");
    assert.deepEqual(await policies.get(c.f.world.companyId), { timeZone: "America/Chicago", quietHours: null, dailyCap: null }, "unticked: no quiet hours; empty: no cap");
    assert.equal((await c.viewer.act("/console/settings/send-rules", { timeZone: "UTC" }, "/console/settings")).status, 403);
  });
});

describe("a console without the journeys, campaigns, send-rules and webhooks plugins", () => {
  it("has no journeys, campaigns or webhooks pages or links, no journeys on a person's page and no sending rules", async () => {
    const t = await startTestKit({ plugins: serverPluginsWithFastPasswords().filter((plugin) => !["journeys", "campaigns", "sendRules", "webhooks"].includes(plugin.name)) });
    try {
      await t.kit.plugin("oauth").users.create({ companyId: t.company.companyId, email: OWNER, password: PASSWORD });
      await t.request({ method: "POST", url: "/v1/subscriptions", body: { user: { phone: "+13125550100" }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING", singleOptIn: true } });
      await t.scheduler.flush();
      const owner = await signedIn(t.kit, OWNER);
      const overview = await owner.get("/console");
      assert.equal(overview.status, 200);
      for (const section of ["journeys", "campaigns", "webhooks"]) {
        assert.ok(!overview.body.includes(`href="/console/${section}"`), section);
        assert.equal((await owner.get(`/console/${section}`)).status, 404, section);
      }
      assert.equal((await owner.get("/console/segments")).status, 404);
      const person = text(await owner.get("/console/subscriber?phone=%2B13125550100"));
      assert.ok(person.includes("Consent history") && !person.includes("Journeys"));
      const settings = text(await owner.get("/console/settings"));
      assert.ok(settings.includes("Sign-up units") && !settings.includes("Sending rules"));
    } finally {
      await t.stop();
    }
  });
});

describe("a console without the webhooks plugin alone", () => {
  it("shows the campaigns and hides the webhooks", async () => {
    const t = await startTestKit({ plugins: serverPluginsWithFastPasswords().filter((plugin) => plugin.name !== "webhooks") });
    try {
      await t.kit.plugin("oauth").users.create({ companyId: t.company.companyId, email: OWNER, password: PASSWORD });
      const owner = await signedIn(t.kit, OWNER);
      const overview = await owner.get("/console");
      assert.ok(overview.body.includes('href="/console/campaigns"') && !overview.body.includes('href="/console/webhooks"'));
      assert.equal((await owner.get("/console/campaigns")).status, 200);
      assert.equal((await owner.get("/console/segments")).status, 200);
      assert.equal((await owner.get("/console/webhooks")).status, 404);
      assert.equal((await owner.act("/console/webhooks", { url: "https://shop.example/hooks" })).status, 404);
    } finally {
      await t.stop();
    }
  });
});
