import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  activeTextSubscriber,
  adaReminder,
  ALL_MESSAGES,
  appointmentTexts,
  badRequest,
  createReminder,
  HOUR,
  ok,
  pendingSends,
  PHONE,
  startAppointmentsKit,
  tactical,
  textStop,
  typeWithMessages,
} from "./support.ts";

const reminderFor = (eventType: string, sendEligibleSubscribersOnly: boolean, phone = PHONE) => adaReminder(eventType, { phone, sendEligibleSubscribersOnly });

describe("who receives appointment texts", () => {
  it("sendEligibleSubscribersOnly true without an eligible TEXT subscription: 400 naming phone, nothing created or sent", async () => {
    const t = await startAppointmentsKit();
    const eventType = await typeWithMessages(t, ALL_MESSAGES);
    const refused = badRequest(await createReminder(t, reminderFor(eventType, true)));
    assert.equal(refused.code, "not_eligible");
    assert.deepEqual(refused.paths, ["phone"]);
    // A pending (unconfirmed) opt-in is not eligible either.
    await t.kit.plugin("subscriptions").optIn(t.company.companyId, { user: { phone: PHONE }, locale: "en-US", subscriptionType: "TRANSACTIONAL" });
    await t.scheduler.flush();
    assert.equal(badRequest(await createReminder(t, reminderFor(eventType, true))).code, "not_eligible");
    assert.deepEqual(await t.kit.plugin("appointments").reminders.list(t.company.companyId), []);
    assert.deepEqual(await pendingSends(t), []);
    assert.deepEqual(await appointmentTexts(t), []);
    await t.stop();
  });

  it("sendEligibleSubscribersOnly true with an active subscription: created and sent; after a STOP the later sends are skipped as not_eligible", async () => {
    const t = await startAppointmentsKit();
    const eventType = await typeWithMessages(t, ALL_MESSAGES);
    await activeTextSubscriber(t);
    const { uuid } = ok(await createReminder(t, reminderFor(eventType, true)));
    await t.scheduler.flush();
    assert.equal((await appointmentTexts(t)).length, 1);
    await textStop(t);
    await t.scheduler.advance(10 * 24 * HOUR);
    assert.equal((await appointmentTexts(t)).length, 1, "no reminder or follow-up after STOP");
    const after = ok(await tactical(t, "GET", `/events/reminders/${uuid}`));
    assert.equal(after.steps.REMINDER.reason, "not_eligible");
    assert.equal(after.steps.FOLLOW_UP.reason, "not_eligible");
    assert.equal(badRequest(await tactical(t, "PUT", `/events/reminders/${uuid}`, { phone: "+19148440002" })).code, "not_eligible", "a new phone must be eligible too");
    await t.stop();
  });

  it("sendEligibleSubscribersOnly false: sent to a phone with no subscription or a pending one, never to a phone that opted out", async () => {
    const t = await startAppointmentsKit();
    const eventType = await typeWithMessages(t, ALL_MESSAGES);
    ok(await createReminder(t, reminderFor(eventType, false, "+19148440001")));
    await t.kit.plugin("subscriptions").optIn(t.company.companyId, { user: { phone: "+19148440002" }, locale: "en-US", subscriptionType: "MARKETING" });
    await t.scheduler.flush();
    ok(await createReminder(t, reminderFor(eventType, false, "+19148440002")));
    await activeTextSubscriber(t, "+19148440003");
    await textStop(t, "+19148440003");
    const optedOut = ok(await createReminder(t, reminderFor(eventType, false, "+19148440003")));
    assert.deepEqual(optedOut.steps.CONFIRMATION, { status: "skipped", reason: "opted_out" });
    assert.equal(optedOut.steps.REMINDER.status, "scheduled", "created regardless; each send checks again");

    await t.scheduler.advance(10 * 24 * HOUR);
    assert.equal((await appointmentTexts(t, "+19148440001")).length, 3);
    assert.equal((await appointmentTexts(t, "+19148440002")).length, 3);
    assert.deepEqual(await appointmentTexts(t, "+19148440003"), []);
    const after = ok(await tactical(t, "GET", `/events/reminders/${optedOut.uuid}`));
    assert.equal(after.steps.REMINDER.reason, "opted_out");
    await t.stop();
  });

  it("a phone that opted out of marketing texts but keeps an active transactional subscription still gets them", async () => {
    const t = await startAppointmentsKit();
    const eventType = await typeWithMessages(t, ALL_MESSAGES);
    const subscriptions = t.kit.plugin("subscriptions");
    await subscriptions.optIn(t.company.companyId, { user: { phone: PHONE }, locale: "en-US", subscriptionType: "MARKETING", singleOptIn: true });
    await activeTextSubscriber(t);
    await subscriptions.unsubscribe(t.company.companyId, { user: { phone: PHONE }, subscriptions: [{ type: "MARKETING", channel: "TEXT" }] });
    await t.scheduler.flush();
    ok(await createReminder(t, reminderFor(eventType, false)));
    await t.scheduler.flush();
    assert.equal((await appointmentTexts(t)).length, 1);
    await t.stop();
  });
});
