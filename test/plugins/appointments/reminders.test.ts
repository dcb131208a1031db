import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TestKit } from "../../support/test-kit.ts";
import {
  adaReminder,
  advanceTo,
  ALL_MESSAGES,
  badRequest,
  createReminder,
  HOUR,
  ok,
  pendingSends,
  PHONE,
  startAppointmentsKit,
  tactical,
  textsTo,
  typeWithMessages,
} from "./support.ts";

const DAY = 24 * HOUR;

/** The instant the outbox handed a message to the provider, by the start of its body. */
async function sentAt(t: TestKit, bodyStart: string): Promise<string> {
  const message = (await t.kit.outbox.list({ to: PHONE })).find((m) => m.body.startsWith(bodyStart));
  assert.ok(message?.sentAt, `no sent message starting with "${bodyStart}"`);
  return new Date(message.sentAt).toISOString();
}

describe("appointment reminders", () => {
  it("15:00 New York on the day DST starts, PT3H and PT24H: confirmation now, reminder at 16:00Z, follow-up a day later, then nothing", async () => {
    const t = await startAppointmentsKit();
    const eventType = await typeWithMessages(t, ALL_MESSAGES);
    const reminder = ok(await createReminder(t, adaReminder(eventType)));
    assert.match(reminder.uuid, /^[0-9a-f-]{36}$/);
    assert.equal(reminder.eventAt, "2026-03-08T15:00:00.000-04:00");
    assert.equal(reminder.state, "scheduled");
    assert.deepEqual(reminder.steps.REMINDER, { status: "scheduled", sendAt: "2026-03-08T12:00:00.000-04:00" });
    assert.deepEqual(reminder.steps.FOLLOW_UP, { status: "scheduled", sendAt: "2026-03-09T15:00:00.000-04:00" });
    assert.equal(reminder.steps.CONFIRMATION.status, "queued");
    assert.deepEqual(await pendingSends(t), [
      ["REMINDER", "2026-03-08T16:00:00.000Z"],
      ["FOLLOW_UP", "2026-03-09T19:00:00.000Z"],
    ]);

    await t.scheduler.flush();
    assert.deepEqual(textsTo(t), ["Hi Ada, your haircut is booked for Sunday, March 8, 2026 at 3:00 PM."]);
    assert.equal(await sentAt(t, "Hi Ada"), "2026-03-01T12:00:00.000Z");

    await advanceTo(t, "2026-03-08T15:59:59.999Z");
    assert.equal(textsTo(t).length, 1, "nothing before the reminder's instant");
    await t.scheduler.advance(1);
    assert.deepEqual(textsTo(t).slice(1), ["Reminder: haircut at 3:00 PM today."]);
    assert.equal(await sentAt(t, "Reminder:"), "2026-03-08T16:00:00.000Z");

    await advanceTo(t, "2026-03-09T19:00:00.000Z");
    assert.deepEqual(textsTo(t).slice(2), ["Thanks for coming, Ada!"]);
    assert.equal(await sentAt(t, "Thanks"), "2026-03-09T19:00:00.000Z");

    const done = ok(await tactical(t, "GET", `/events/reminders/${reminder.uuid}`));
    assert.equal(done.state, "completed");
    assert.deepEqual(
      Object.entries(done.steps).map(([step, view]: [string, any]) => [step, view.status]),
      [
        ["CONFIRMATION", "sent"],
        ["REMINDER", "sent"],
        ["FOLLOW_UP", "sent"],
      ],
    );
    await t.scheduler.advance(30 * DAY);
    assert.equal(textsTo(t).length, 3);
    await t.stop();
  });

  it("PT3H before 04:00 EDT on the DST day is 00:00 EST (05:00Z), and P1D before is 04:00 EST the day before: hours elapse, days are calendar days", async () => {
    const t = await startAppointmentsKit();
    const eventType = await typeWithMessages(t, { REMINDER: "See you at {eventTime}." });
    const byHours = ok(await createReminder(t, { eventType: { uuid: eventType }, phone: PHONE, eventDateTime: "2026-03-08T04:00", subscriberTimeZone: "America/New_York" }));
    assert.equal(byHours.remindTimeOffset, "PT3H", "the default offset");
    assert.equal(byHours.steps.REMINDER.sendAt, "2026-03-08T00:00:00.000-05:00");
    const byDay = ok(
      await createReminder(t, { eventType: { uuid: eventType }, phone: "+19148440002", eventDateTime: "2026-03-08T04:00", subscriberTimeZone: "America/New_York", remindTimeOffset: "P1D" }),
    );
    assert.equal(byDay.steps.REMINDER.sendAt, "2026-03-07T04:00:00.000-05:00");
    assert.deepEqual(await pendingSends(t), [
      ["REMINDER", "2026-03-08T05:00:00.000Z"],
      ["REMINDER", "2026-03-07T09:00:00.000Z"],
    ]);
    await advanceTo(t, "2026-03-08T05:00:00.000Z");
    assert.deepEqual(textsTo(t), ["See you at 4:00 AM."]);
    assert.deepEqual(textsTo(t, "+19148440002"), ["See you at 4:00 AM."]);
    await t.stop();
  });

  it("reads a wall-clock time in a DST gap with the offset before it (02:30 → 03:30 EDT) and one in the overlap as the first (EDT) 01:30; an offset is that instant", async () => {
    const t = await startAppointmentsKit();
    const eventType = await typeWithMessages(t, {});
    const at = async (eventDateTime: string, phone: string) =>
      ok(await createReminder(t, { eventType: { uuid: eventType }, phone, eventDateTime, subscriberTimeZone: "America/New_York" }));
    const gap = await at("2026-03-08T02:30", "+19148440011");
    assert.equal(gap.eventAt, "2026-03-08T03:30:00.000-04:00");
    assert.equal(gap.eventDateTime, "2026-03-08T02:30", "echoed as given");
    assert.equal(gap.steps.REMINDER.sendAt, "2026-03-07T23:30:00.000-05:00");
    const overlap = await at("2026-11-01T01:30", "+19148440012");
    assert.equal(overlap.eventAt, "2026-11-01T01:30:00.000-04:00");
    assert.equal(overlap.steps.REMINDER.sendAt, "2026-10-31T22:30:00.000-04:00");
    const instant = await at("2026-03-08T15:00:00Z", "+19148440013");
    assert.equal(instant.eventAt, "2026-03-08T11:00:00.000-04:00");
    const otherOffset = await at("2026-03-08T15:00:00+01:00", "+19148440014");
    assert.equal(otherOffset.eventAt, "2026-03-08T10:00:00.000-04:00");
    await t.stop();
  });

  it("no-show sends the no-show text and cancels the follow-up; a second no-show sends nothing; cancel after it is a 400", async () => {
    const t = await startAppointmentsKit();
    const eventType = await typeWithMessages(t, ALL_MESSAGES);
    const { uuid } = ok(await createReminder(t, adaReminder(eventType)));
    await advanceTo(t, "2026-03-08T20:00:00.000Z");
    assert.equal(textsTo(t).length, 2, "confirmation and reminder");

    const missed = ok(await tactical(t, "POST", `/events/reminders/${uuid}/no-show`));
    assert.equal(missed.state, "no_show");
    assert.deepEqual(missed.steps.FOLLOW_UP, { status: "canceled", sendAt: "2026-03-09T15:00:00.000-04:00", reason: "no_show" });
    assert.equal(missed.steps.NO_SHOW.status, "queued");
    assert.deepEqual(await pendingSends(t), []);
    await t.scheduler.advance(5 * DAY);
    assert.deepEqual(textsTo(t).slice(2), ["We missed you today, Ada."]);

    assert.equal(ok(await tactical(t, "POST", `/events/reminders/${uuid}/no-show`)).state, "no_show");
    await t.scheduler.flush();
    assert.equal(textsTo(t).length, 3);
    const refused = badRequest(await tactical(t, "POST", `/events/reminders/${uuid}/cancel`));
    assert.equal(refused.code, "reminder_ended");
    assert.equal(badRequest(await tactical(t, "PUT", `/events/reminders/${uuid}`, { eventDateTime: "2026-03-20T10:00" })).code, "reminder_ended");
    await t.stop();
  });

  it("moving the appointment replaces the pending reminder: the old time sends nothing, the new one sends once", async () => {
    const t = await startAppointmentsKit();
    const eventType = await typeWithMessages(t, ALL_MESSAGES);
    const { uuid } = ok(await createReminder(t, adaReminder(eventType)));
    const moved = ok(await tactical(t, "PUT", `/events/reminders/${uuid}`, { eventDateTime: "2026-03-10T09:30" }));
    assert.equal(moved.eventAt, "2026-03-10T09:30:00.000-04:00");
    assert.equal(moved.steps.REMINDER.sendAt, "2026-03-10T06:30:00.000-04:00");
    assert.equal(moved.steps.CONFIRMATION.status, "queued", "no second confirmation");
    assert.equal(moved.firstName, "Ada", "fields not given are kept");
    assert.deepEqual(await pendingSends(t), [
      ["REMINDER", "2026-03-10T10:30:00.000Z"],
      ["FOLLOW_UP", "2026-03-11T13:30:00.000Z"],
    ]);

    await advanceTo(t, "2026-03-09T23:00:00.000Z");
    assert.deepEqual(textsTo(t), ["Hi Ada, your haircut is booked for Sunday, March 8, 2026 at 3:00 PM."], "the old reminder and follow-up never fire");
    await advanceTo(t, "2026-03-10T10:30:00.000Z");
    assert.deepEqual(textsTo(t).slice(1), ["Reminder: haircut at 9:30 AM today."]);

    // Moved again after its reminder went out: the new time gets a new reminder (a new message, not a duplicate).
    ok(await tactical(t, "PUT", `/events/reminders/${uuid}`, { eventDateTime: "2026-03-12T09:30", metadata: { service: "beard trim" } }));
    await advanceTo(t, "2026-03-12T10:30:00.000Z");
    assert.deepEqual(textsTo(t).slice(2), ["Reminder: beard trim at 9:30 AM today."]);
    // An update that does not move it sends nothing again.
    ok(await tactical(t, "PUT", `/events/reminders/${uuid}`, { lastName: "Lovelace" }));
    await t.scheduler.advance(HOUR);
    assert.equal(textsTo(t).length, 3);
    await t.stop();
  });

  it("cancel sends the cancellation and nothing else ever fires; cancel again sends nothing; no-show after cancel is a 400", async () => {
    const t = await startAppointmentsKit();
    const eventType = await typeWithMessages(t, ALL_MESSAGES);
    const { uuid } = ok(await createReminder(t, adaReminder(eventType)));
    const canceled = ok(await tactical(t, "POST", `/events/reminders/${uuid}/cancel`));
    assert.equal(canceled.state, "canceled");
    assert.equal(canceled.steps.REMINDER.status, "canceled");
    assert.equal(canceled.steps.REMINDER.reason, "canceled");
    assert.equal(canceled.steps.FOLLOW_UP.status, "canceled");
    assert.deepEqual(await pendingSends(t), []);
    await t.scheduler.advance(30 * DAY);
    assert.deepEqual(textsTo(t), [
      "Hi Ada, your haircut is booked for Sunday, March 8, 2026 at 3:00 PM.",
      "Your haircut on Sunday, March 8, 2026 is canceled.",
    ]);

    const again = ok(await tactical(t, "POST", `/events/reminders/${uuid}/cancel`));
    assert.deepEqual(again, ok(await tactical(t, "GET", `/events/reminders/${uuid}`)));
    await t.scheduler.flush();
    assert.equal(textsTo(t).length, 2);
    assert.equal(badRequest(await tactical(t, "POST", `/events/reminders/${uuid}/no-show`)).code, "reminder_ended");
    await t.stop();
  });

  it("does not send a reminder whose moment has passed at creation; the other steps still go", async () => {
    const t = await startAppointmentsKit();
    const eventType = await typeWithMessages(t, ALL_MESSAGES);
    // The clock is 2026-03-01T12:00Z (07:00 EST); the appointment is at 09:00 EST, so 06:00 has passed.
    const reminder = ok(await createReminder(t, { ...adaReminder(eventType), eventDateTime: "2026-03-01T09:00" }));
    assert.deepEqual(reminder.steps.REMINDER, { status: "skipped", sendAt: "2026-03-01T06:00:00.000-05:00", reason: "time_passed" });
    assert.equal(reminder.steps.FOLLOW_UP.status, "scheduled");
    await t.scheduler.advance(2 * DAY);
    assert.deepEqual(textsTo(t), ["Hi Ada, your haircut is booked for Sunday, March 1, 2026 at 9:00 AM.", "Thanks for coming, Ada!"]);
    await t.stop();
  });

  it("a type without a message for a step sends nothing for that step", async () => {
    const t = await startAppointmentsKit();
    const eventType = await typeWithMessages(t, { REMINDER: ALL_MESSAGES.REMINDER });
    const reminder = ok(await createReminder(t, adaReminder(eventType)));
    assert.deepEqual(reminder.steps.CONFIRMATION, { status: "skipped", reason: "no_message" });
    await t.scheduler.advance(10 * DAY);
    assert.deepEqual(textsTo(t), ["Reminder: haircut at 3:00 PM today."]);
    const after = ok(await tactical(t, "GET", `/events/reminders/${reminder.uuid}`));
    assert.deepEqual(after.steps.FOLLOW_UP, { status: "skipped", sendAt: "2026-03-09T15:00:00.000-04:00", reason: "no_message" });
    const canceled = ok(await tactical(t, "POST", `/events/reminders/${reminder.uuid}/cancel`));
    assert.deepEqual(canceled.steps.CANCELLATION, { status: "skipped", reason: "no_message" });
    assert.equal(textsTo(t).length, 1);
    await t.stop();
  });

  it("a message edited after the reminder was made is sent as it reads then; a macro nothing fills skips the step, visibly", async () => {
    const t = await startAppointmentsKit();
    const eventType = await typeWithMessages(t, { REMINDER: ALL_MESSAGES.REMINDER, FOLLOW_UP: ALL_MESSAGES.FOLLOW_UP });
    const { uuid } = ok(await createReminder(t, adaReminder(eventType, { metadata: { service: "haircut", firstName: "Dr. Ada" } })));
    const messages = await t.kit.plugin("appointments").messages.ofType(t.company.companyId, eventType);
    const reminderMessage = messages.find((m) => m.messageType === "REMINDER")!;
    const followUp = messages.find((m) => m.messageType === "FOLLOW_UP")!;
    ok(await tactical(t, "PUT", `/events/types/messages/${reminderMessage.id}`, { text: "{firstName}: {service} today at {eventTime}, {companyName}." }));
    ok(await tactical(t, "PUT", `/events/types/messages/${followUp.id}`, { text: "How was it? Rate us: {surveyLink}" }));
    await t.scheduler.advance(10 * DAY);
    assert.deepEqual(textsTo(t), ["Dr. Ada: haircut today at 3:00 PM, Acme."], "metadata wins over the built-in firstName");
    const after = ok(await tactical(t, "GET", `/events/reminders/${uuid}`));
    assert.deepEqual(after.steps.FOLLOW_UP, { status: "skipped", sendAt: "2026-03-09T15:00:00.000-04:00", reason: "missing_macros", missingMacros: ["surveyLink"] });
    assert.equal(after.state, "completed");
    await t.stop();
  });

  it("an unknown uuid, or another company's, is a 404 on read, update, cancel and no-show", async () => {
    const t = await startAppointmentsKit();
    const eventType = await typeWithMessages(t, {});
    const { uuid } = ok(await createReminder(t, adaReminder(eventType)));
    const other = await t.kit.provisionCompany({ name: "Other" });
    const otherToken = other.output.legacyToken as string;
    for (const id of ["00000000-0000-4000-8000-000000000000", uuid]) {
      const token = id === uuid ? otherToken : undefined;
      assert.equal((await tactical(t, "GET", `/events/reminders/${id}`, undefined, token)).status, 404);
      assert.equal((await tactical(t, "PUT", `/events/reminders/${id}`, { firstName: "Eve" }, token)).status, 404);
      assert.equal((await tactical(t, "POST", `/events/reminders/${id}/cancel`, undefined, token)).status, 404);
      assert.equal((await tactical(t, "POST", `/events/reminders/${id}/no-show`, undefined, token)).status, 404);
    }
    const unknown = await tactical(t, "POST", "/events/reminders/nope/cancel");
    assert.equal(unknown.json<any>().error.code, "not_found");
    assert.equal(ok(await tactical(t, "GET", `/events/reminders/${uuid}`)).state, "scheduled", "untouched by the other company");
    await t.stop();
  });

  it("a second reminder for the same externalEventId and phone is a 400 and creates nothing; another phone, or after a cancel, is fine", async () => {
    const t = await startAppointmentsKit();
    const eventType = await typeWithMessages(t, ALL_MESSAGES);
    const first = ok(await createReminder(t, adaReminder(eventType, { externalEventId: "appt-1" })));
    await t.scheduler.flush();
    const sendsBefore = await pendingSends(t);
    const duplicate = badRequest(await createReminder(t, adaReminder(eventType, { externalEventId: "appt-1", eventDateTime: "2026-03-09T10:00" })));
    assert.equal(duplicate.code, "duplicate_reminder");
    assert.deepEqual(duplicate.paths, ["externalEventId"]);
    await t.scheduler.flush();
    assert.equal(textsTo(t).length, 1, "no second confirmation");
    assert.deepEqual(await pendingSends(t), sendsBefore);
    assert.equal((await t.kit.plugin("appointments").reminders.list(t.company.companyId)).length, 1);

    ok(await createReminder(t, adaReminder(eventType, { externalEventId: "appt-1", phone: "+19148440002" })));
    const second = ok(await createReminder(t, adaReminder(eventType, { externalEventId: "appt-2" })));
    assert.equal(badRequest(await tactical(t, "PUT", `/events/reminders/${second.uuid}`, { externalEventId: "appt-1" })).code, "duplicate_reminder");
    ok(await tactical(t, "POST", `/events/reminders/${first.uuid}/cancel`));
    const rebooked = ok(await createReminder(t, adaReminder(eventType, { externalEventId: "appt-1" })));
    assert.equal(rebooked.externalEventId, "appt-1");
    await t.stop();
  });

  it("answers the reminder object with every field given, and removes optional ones set to null", async () => {
    const t = await startAppointmentsKit();
    const eventType = await typeWithMessages(t, {});
    const created = ok(
      await createReminder(t, {
        ...adaReminder(eventType),
        externalEventId: "appt-9",
        lastName: "Lovelace",
        emailAddress: "Ada@Example.com",
        sendEligibleSubscribersOnly: false,
        subscriberTimeZone: "america/new_york",
        unknownField: "ignored",
      }),
    );
    assert.deepEqual(
      { ...created, uuid: "-", steps: Object.keys(created.steps) },
      {
        uuid: "-",
        externalEventId: "appt-9",
        phone: PHONE,
        firstName: "Ada",
        lastName: "Lovelace",
        emailAddress: "ada@example.com",
        eventType: { uuid: eventType },
        remindTimeOffset: "PT3H",
        followUpTimeOffset: "PT24H",
        eventDateTime: "2026-03-08T15:00:00",
        subscriberTimeZone: "america/new_york",
        sendEligibleSubscribersOnly: false,
        metadata: { service: "haircut" },
        eventAt: "2026-03-08T15:00:00.000-04:00",
        state: "scheduled",
        steps: ["CONFIRMATION", "REMINDER", "FOLLOW_UP"],
        createdAt: "2026-03-01T12:00:00.000Z",
        updatedAt: "2026-03-01T12:00:00.000Z",
      },
    );
    const cleared = ok(await tactical(t, "PUT", `/events/reminders/${created.uuid}`, { followUpTimeOffset: null, externalEventId: null, remindTimeOffset: null, metadata: null }));
    assert.equal(cleared.followUpTimeOffset, undefined);
    assert.equal(cleared.externalEventId, undefined);
    assert.equal(cleared.steps.FOLLOW_UP, undefined);
    assert.deepEqual(cleared.metadata, {});
    assert.deepEqual(await pendingSends(t), [["REMINDER", "2026-03-08T16:00:00.000Z"]]);
    await t.stop();
  });

  it("a REMINDER job that runs again after it sent (a crash before the job was marked done) sends nothing twice", async () => {
    const t = await startAppointmentsKit();
    const eventType = await typeWithMessages(t, { REMINDER: ALL_MESSAGES.REMINDER });
    const { uuid } = ok(await createReminder(t, adaReminder(eventType)));
    await advanceTo(t, "2026-03-08T16:00:00.000Z");
    const reminders = t.kit.plugin("appointments").reminders;
    await reminders.sendStep({ companyId: t.company.companyId, reminderId: uuid, step: "REMINDER" });
    await t.scheduler.flush();
    assert.deepEqual(textsTo(t), ["Reminder: haircut at 3:00 PM today."]);
    await t.stop();
  });
});
