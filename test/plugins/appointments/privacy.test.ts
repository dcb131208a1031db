import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { adaReminder, ALL_MESSAGES, createReminder, HOUR, ok, pendingSends, PHONE, startAppointmentsKit, tactical, textsTo, typeWithMessages } from "./support.ts";

const OTHER_PHONE = "+19148440002";

describe("privacy deletion of reminders", () => {
  it("deletes the subject's reminders (by phone or email) with their pending sends; nothing is sent to them afterwards; others are untouched", async () => {
    const t = await startAppointmentsKit();
    const eventType = await typeWithMessages(t, ALL_MESSAGES);
    const body = (phone: string, extra: Record<string, unknown> = {}) => adaReminder(eventType, { phone, ...extra });
    const byPhone = ok(await createReminder(t, body(PHONE)));
    const byEmail = ok(await createReminder(t, body("+19148440003", { emailAddress: "ada@example.com" })));
    const kept = ok(await createReminder(t, body(OTHER_PHONE)));
    const other = await t.kit.provisionCompany({ name: "Other" });
    const foreignType = ok(await tactical(t, "POST", "/events/types", { type: "Other" }, other.output.legacyToken as string)).uuid;
    const foreignMessage = { eventType: { uuid: foreignType }, messageType: "REMINDER", text: "Other Co reminder" };
    ok(await tactical(t, "POST", "/events/types/messages", foreignMessage, other.output.legacyToken as string));
    ok(await tactical(t, "POST", "/events/reminders", { ...body(PHONE), eventType: { uuid: foreignType } }, other.output.legacyToken as string));
    await t.scheduler.flush();
    assert.equal((await pendingSends(t)).length, 8);

    const appointments = t.kit.plugin("appointments");
    // 2 reminders and 4 queued jobs of this company.
    assert.equal(await appointments.deleteSubjectData({ companyId: t.company.companyId, phone: PHONE, email: "ADA@example.com" }), 6);
    assert.equal(await appointments.deleteSubjectData({ companyId: t.company.companyId, phone: PHONE }), 0);
    assert.equal((await tactical(t, "GET", `/events/reminders/${byPhone.uuid}`)).status, 404);
    assert.equal((await tactical(t, "GET", `/events/reminders/${byEmail.uuid}`)).status, 404);
    assert.equal((await tactical(t, "POST", `/events/reminders/${byPhone.uuid}/cancel`)).status, 404);
    assert.equal((await pendingSends(t)).length, 4, "the other phone's and the other company's stay");

    await t.scheduler.advance(10 * 24 * HOUR);
    assert.deepEqual(textsTo(t), ["Hi Ada, your haircut is booked for Sunday, March 8, 2026 at 3:00 PM.", "Other Co reminder"], "only the other company's reminder after the deletion");
    assert.equal(textsTo(t, OTHER_PHONE).length, 3);
    assert.equal(ok(await tactical(t, "GET", `/events/reminders/${kept.uuid}`)).state, "completed");
    await t.stop();
  });

  it("is the plugin's deleteSubjectData hook, reached by kit.deleteSubjectData", async () => {
    const t = await startAppointmentsKit();
    const eventType = await typeWithMessages(t, {});
    ok(await createReminder(t, { eventType: { uuid: eventType }, phone: PHONE, eventDateTime: "2026-03-08T15:00", subscriberTimeZone: "America/New_York" }));
    assert.equal(await t.kit.deleteSubjectData({ companyId: t.company.companyId, phone: PHONE }), 2);
    assert.deepEqual(await t.kit.plugin("appointments").reminders.list(t.company.companyId), []);
    assert.deepEqual(await pendingSends(t), []);
    await t.stop();
  });
});
