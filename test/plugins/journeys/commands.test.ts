import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import { cli, dataDirWithCompany } from "../../support/cli.ts";

describe("journeys and send-rules CLI commands", () => {
  let dataDir = "";
  let companyId = "";

  before(async () => ({ dataDir, companyId } = await dataDirWithCompany()));

  it("lists the templates and installs one; lists, shows, pauses, resumes and deletes it", async () => {
    const templates = await cli(dataDir, "journeys", "templates");
    assert.equal(templates.code, 0, templates.stderr);
    for (const name of ["back_in_stock", "price_drop", "low_inventory", "cart_abandonment", "browse_abandonment", "welcome"]) assert.match(templates.stdout, new RegExp(name));
    const installed = await cli(dataDir, "journeys", "install", "--company", companyId, "--template", "cart_abandonment", "--name", "Carts", "--json");
    assert.equal(installed.code, 0, installed.stderr);
    assert.equal(installed.json.name, "Carts");
    const id: string = installed.json.id;
    const list = await cli(dataDir, "journeys", "list", "--company", companyId);
    assert.match(list.stdout, new RegExp(`${id}\\s+Carts\\s+cart_abandonment\\s+active\\s+wait PT1H, sms`));
    assert.match((await cli(dataDir, "journeys", "show", id, "--company", companyId)).stdout, /Still thinking it over\?/);
    assert.equal((await cli(dataDir, "journeys", "pause", id, "--company", companyId, "--json")).json.status, "paused");
    assert.equal((await cli(dataDir, "journeys", "resume", id, "--company", companyId, "--json")).json.status, "active");
    const stats = await cli(dataDir, "journeys", "stats", id, "--company", companyId);
    assert.match(stats.stdout, /entered:\s+0\n/);
    assert.equal((await cli(dataDir, "journeys", "delete", id, "--company", companyId)).code, 0);
    const gone = await cli(dataDir, "journeys", "show", id, "--company", companyId);
    assert.equal(gone.code, 2);
    assert.match(gone.stderr, new RegExp(`no journey ${id}`));
  });

  it("creates a journey from a JSON file, and says which field is wrong in one line", async () => {
    const good = join(dataDir, "journey.json");
    writeFileSync(good, JSON.stringify({ name: "Hello", trigger: { type: "welcome" }, steps: [{ type: "sms", text: "Hi from {companyName}" }] }));
    const created = await cli(dataDir, "journeys", "create", "--company", companyId, "--file", good, "--json");
    assert.equal(created.code, 0, created.stderr);
    assert.deepEqual(created.json.trigger, { type: "welcome" });
    const bad = join(dataDir, "bad.json");
    writeFileSync(bad, JSON.stringify({ name: "Hello", trigger: { type: "welcome" }, steps: [{ type: "sms", text: "{productName}" }] }));
    const refused = await cli(dataDir, "journeys", "create", "--company", companyId, "--file", bad);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /steps\.0\.text: unknown macro \{productName\}/);
    assert.equal((await cli(dataDir, "journeys", "install", "--company", companyId, "--template", "anniversary")).code, 2);
  });

  it("shows and sets a company's time zone, quiet hours and daily cap", async () => {
    const shown = await cli(dataDir, "send-rules", "show", "--company", companyId, "--json");
    assert.deepEqual(shown.json, { timeZone: "America/New_York", quietHours: { start: "20:00", end: "11:00" }, dailyCap: 3 });
    const set = await cli(dataDir, "send-rules", "set", "--company", companyId, "--time-zone", "Europe/Paris", "--quiet-hours", "21:00-09:30", "--daily-cap", "off", "--json");
    assert.equal(set.code, 0, set.stderr);
    assert.deepEqual(set.json, { timeZone: "Europe/Paris", quietHours: { start: "21:00", end: "09:30" }, dailyCap: null });
    const refused = await cli(dataDir, "send-rules", "set", "--company", companyId, "--quiet-hours", "9pm-9am");
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /quietHours\.start: must be a local time HH:MM/);
  });
});
