import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cli, newDataDir, openServerKit } from "../../support/cli.ts";
import { PHONE } from "./support.ts";

describe("appointments CLI", () => {
  it("appointment-types create and list; reminders list and show with each step's status", async () => {
    const dataDir = newDataDir();
    const { companyId } = (await cli(dataDir, "init", "--company", "Acme", "--json")).json;
    const created = await cli(dataDir, "appointment-types", "create", "--company", companyId, "--type", "Haircut", "--json");
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.json.type, "Haircut");
    assert.equal((await cli(dataDir, "appointment-types", "create", "--company", companyId, "--type", " ")).code, 2);

    const kit = await openServerKit(dataDir);
    const appointments = kit.plugin("appointments");
    await appointments.messages.create(companyId, { eventType: { uuid: created.json.uuid }, messageType: "REMINDER", text: "See you at {eventTime}" });
    const reminder = await appointments.reminders.create(companyId, {
      eventType: { uuid: created.json.uuid },
      phone: PHONE,
      eventDateTime: "2099-03-08T15:00",
      subscriberTimeZone: "America/New_York",
    });
    await kit.stop();

    const types = await cli(dataDir, "appointment-types", "list", "--company", companyId);
    assert.match(types.stdout, new RegExp(`${created.json.uuid}  Haircut\\n  REMINDER  [0-9a-f-]{36}\\n    See you at \\{eventTime\\}`));
    const list = await cli(dataDir, "reminders", "list", "--company", companyId, "--state", "scheduled", "--json");
    assert.deepEqual(list.json.map((r: { uuid: string }) => r.uuid), [reminder.uuid]);
    assert.deepEqual((await cli(dataDir, "reminders", "list", "--company", companyId, "--phone", "+19148449999", "--json")).json, []);
    assert.equal((await cli(dataDir, "reminders", "list", "--company", companyId, "--state", "later")).code, 2);
    assert.equal((await cli(dataDir, "reminders", "list", "--company", companyId, "--limit", "0")).code, 2);

    const shown = await cli(dataDir, "reminders", "show", "--company", companyId, "--uuid", reminder.uuid);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /state:\s+scheduled/);
    assert.match(shown.stdout, /REMINDER\s+scheduled\s+2099-03-08T12:00:00\.000-04:00/);
    assert.match(shown.stdout, /CONFIRMATION\s+skipped\s+no_message/);
    const unknown = await cli(dataDir, "reminders", "show", "--company", companyId, "--uuid", "nope");
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /no reminder nope/);
  });
});
