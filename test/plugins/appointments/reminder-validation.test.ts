import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TestKit } from "../../support/test-kit.ts";
import { adaReminder, ALL_MESSAGES, badRequest, createReminder, ok, pendingSends, startAppointmentsKit, tactical, typeWithMessages } from "./support.ts";

async function validBody(t: TestKit): Promise<Record<string, unknown>> {
  return adaReminder(await typeWithMessages(t, ALL_MESSAGES));
}

/** Nothing was stored, planned or texted. */
async function assertNothingScheduled(t: TestKit): Promise<void> {
  assert.deepEqual(await t.kit.plugin("appointments").reminders.list(t.company.companyId), []);
  assert.deepEqual(await pendingSends(t), []);
  assert.deepEqual(await t.kit.outbox.list(), []);
}

describe("reminder bad input", () => {
  const cases: Array<[string, Record<string, unknown>, string[]]> = [
    ["an unknown time zone", { subscriberTimeZone: "Mars/Olympus" }, ["subscriberTimeZone"]],
    ["a time zone that is not region/city", { subscriberTimeZone: "EST" }, ["subscriberTimeZone"]],
    ["a duration in words", { remindTimeOffset: "3 hours" }, ["remindTimeOffset"]],
    ["a negative duration", { followUpTimeOffset: "-PT3H" }, ["followUpTimeOffset"]],
    ["a duration without components", { remindTimeOffset: "PT" }, ["remindTimeOffset"]],
    ["a duration over 366 days", { remindTimeOffset: "P2Y" }, ["remindTimeOffset"]],
    ["a duration as a number", { remindTimeOffset: 3 }, ["remindTimeOffset"]],
    ["an impossible date and time", { eventDateTime: "2026-13-40T25:00" }, ["eventDateTime"]],
    ["a date without a time", { eventDateTime: "2026-03-08" }, ["eventDateTime"]],
    ["a time as a number", { eventDateTime: 1772996400000 }, ["eventDateTime"]],
    ["a phone as a JSON number", { phone: 19148440001 }, ["phone"]],
    ["a phone with punctuation", { phone: "914-844-0001" }, ["phone"]],
    ["an unknown eventType.uuid", { eventType: { uuid: "00000000-0000-4000-8000-000000000000" } }, ["eventType.uuid"]],
    ["an eventType that is not an object", { eventType: "haircut" }, ["eventType"]],
    ["a metadata list", { metadata: ["haircut"] }, ["metadata"]],
    ["a 1 MB metadata object", { metadata: { service: "haircut", blob: "x".repeat(1_000_000) } }, ["metadata"]],
    ["sendEligibleSubscribersOnly as a string", { sendEligibleSubscribersOnly: "yes" }, ["sendEligibleSubscribersOnly"]],
    ["a malformed emailAddress", { emailAddress: "ada" }, ["emailAddress"]],
    ["an empty externalEventId", { externalEventId: "" }, ["externalEventId"]],
  ];
  for (const [what, change, paths] of cases) {
    it(`${what}: 400 naming ${paths.join(", ")}, nothing scheduled`, async () => {
      const t = await startAppointmentsKit();
      const response = await createReminder(t, { ...(await validBody(t)), ...change });
      assert.deepEqual(badRequest(response).paths, paths);
      await assertNothingScheduled(t);
      await t.stop();
    });
  }

  it("metadata missing a macro: 400 listing each missing macro and the messages that use it, nothing scheduled", async () => {
    const t = await startAppointmentsKit();
    const body = await validBody(t);
    const error = badRequest(await createReminder(t, { ...body, firstName: undefined, metadata: {} }));
    assert.equal(error.code, "missing_macros");
    assert.equal(error.message, "metadata has no value for the macros firstName, service");
    assert.deepEqual(error.paths, ["metadata.firstName", "metadata.service"]);
    const response = await createReminder(t, { ...body, metadata: { service: { name: "haircut" } } });
    assert.deepEqual(response.json<any>().error.details, [{ path: "metadata.service", message: "is required: the CONFIRMATION, REMINDER, CANCELLATION messages use {service}" }]);
    await assertNothingScheduled(t);
    await t.stop();
  });

  it("missing required fields are each named; a body that is not an object is named as the body", async () => {
    const t = await startAppointmentsKit();
    const error = badRequest(await createReminder(t, { firstName: "Ada" }));
    assert.deepEqual(error.paths, ["eventType", "phone", "eventDateTime", "subscriberTimeZone"]);
    assert.deepEqual(
      (await createReminder(t, {})).json<any>().error.details.map((d: any) => d.message),
      ["is required", "is required", "is required", "is required"],
    );
    assert.deepEqual(badRequest(await createReminder(t, [1, 2])).paths, ["body"]);
    assert.deepEqual(badRequest(await tactical(t, "POST", "/events/reminders")).paths, ["body"]);
    assert.equal((await t.request({ method: "POST", url: "/events/reminders", body: "{not json", headers: { "content-type": "application/json" }, token: t.company.legacyToken })).status, 400);
    await assertNothingScheduled(t);
    await t.stop();
  });

  it("refuses the same bad input on update, and leaves the reminder and its pending sends as they were", async () => {
    const t = await startAppointmentsKit();
    const created = ok(await createReminder(t, await validBody(t)));
    const before = await pendingSends(t);
    const put = (body: unknown) => tactical(t, "PUT", `/events/reminders/${created.uuid}`, body);
    assert.deepEqual(badRequest(await put({ subscriberTimeZone: "Mars/Olympus" })).paths, ["subscriberTimeZone"]);
    assert.deepEqual(badRequest(await put({ remindTimeOffset: "3 hours" })).paths, ["remindTimeOffset"]);
    assert.deepEqual(badRequest(await put({ eventDateTime: "2026-13-40T25:00" })).paths, ["eventDateTime"]);
    assert.deepEqual(badRequest(await put({ phone: 19148440001 })).paths, ["phone"]);
    assert.deepEqual(badRequest(await put({ eventType: { uuid: "unknown" } })).paths, ["eventType.uuid"]);
    assert.deepEqual(badRequest(await put({ metadata: {} })).paths, ["metadata.service"]);
    assert.deepEqual(badRequest(await put({ metadata: { blob: "x".repeat(1_000_000) } })).paths, ["metadata"]);
    assert.deepEqual(badRequest(await put({ phone: null })).paths, ["phone"]);
    assert.deepEqual(await pendingSends(t), before);
    const after = ok(await tactical(t, "GET", `/events/reminders/${created.uuid}`));
    assert.deepEqual(after, created);
    await t.stop();
  });
});
