import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fakeClock, type FakeClock } from "../../../adapters/clock/index.ts";
import { memorySms, type MemorySms } from "../../../adapters/sms/memory/index.ts";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import type { TestKit } from "../../support/test-kit.ts";
import { adaReminder, advanceTo, ALL_MESSAGES, createReminder, HOUR, ok, pendingSends, PHONE, startAppointmentsKit, tactical, textsTo, typeWithMessages } from "./support.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";

/** A kit on the same SQLite file, clock and provider, speaking for the company of the first kit. */
async function restart(filename: string, clock: FakeClock, sms: MemorySms, company: TestKit["company"]): Promise<TestKit> {
  const kit = await startAppointmentsKit({ storage: sqliteStorage({ filename }), clock, sms, bare: true });
  return { ...kit, company };
}

describe("reminders across restarts", () => {
  it("a restart between every step on the same SQLite file loses no send and sends none twice", async () => {
    const filename = join(temporaryDirectory("reminders"), "reachkit.db");
    const clock = fakeClock("2026-03-01T12:00:00.000Z");
    const sms = memorySms();
    const first = await startAppointmentsKit({ storage: sqliteStorage({ filename }), clock, sms });
    const eventType = await typeWithMessages(first, ALL_MESSAGES);
    const { uuid } = ok(await createReminder(first, adaReminder(eventType)));
    await first.stop();
    assert.equal(sms.sent.length, 0, "stopped before the confirmation was delivered");

    const second = await restart(filename, clock, sms, first.company);
    await second.scheduler.flush();
    assert.deepEqual(textsTo(second), ["Hi Ada, your haircut is booked for Sunday, March 8, 2026 at 3:00 PM."]);
    assert.deepEqual(await pendingSends(second), [
      ["REMINDER", "2026-03-08T16:00:00.000Z"],
      ["FOLLOW_UP", "2026-03-09T19:00:00.000Z"],
    ]);
    await advanceTo(second, "2026-03-08T16:00:00.000Z");
    assert.equal(textsTo(second).length, 2);
    await second.stop();

    const third = await restart(filename, clock, sms, first.company);
    await third.scheduler.flush();
    assert.equal(textsTo(third).length, 2, "the reminder is not sent again after the restart");
    await advanceTo(third, "2026-03-09T19:00:00.000Z");
    await third.stop();

    const fourth = await restart(filename, clock, sms, first.company);
    await fourth.scheduler.advance(30 * 24 * HOUR);
    assert.deepEqual(textsTo(fourth), [
      "Hi Ada, your haircut is booked for Sunday, March 8, 2026 at 3:00 PM.",
      "Reminder: haircut at 3:00 PM today.",
      "Thanks for coming, Ada!",
    ]);
    const reminder = ok(await tactical(fourth, "GET", `/events/reminders/${uuid}`));
    assert.equal(reminder.state, "completed");
    assert.deepEqual(await pendingSends(fourth), []);
    await fourth.stop();
  });

  it("a step that fell due while the kit was down is sent when it starts; a reminder whose appointment has begun is skipped", async () => {
    const filename = join(temporaryDirectory("reminders"), "reachkit.db");
    const clock = fakeClock("2026-03-01T12:00:00.000Z");
    const sms = memorySms();
    const first = await startAppointmentsKit({ storage: sqliteStorage({ filename }), clock, sms });
    const eventType = await typeWithMessages(first, { REMINDER: "See you at {eventTime}." });
    const body = (phone: string, eventDateTime: string) => ({ eventType: { uuid: eventType }, phone, eventDateTime, subscriberTimeZone: "America/New_York" });
    ok(await createReminder(first, body(PHONE, "2026-03-08T15:00")));
    const late = ok(await createReminder(first, body("+19148440002", "2026-03-08T13:00")));
    await first.stop();

    clock.set("2026-03-08T17:30:00.000Z"); // 13:30 EDT: the first appointment is still ahead, the second has begun
    const second = await restart(filename, clock, sms, first.company);
    await second.scheduler.flush();
    assert.deepEqual(textsTo(second), ["See you at 3:00 PM."]);
    assert.deepEqual(textsTo(second, "+19148440002"), []);
    const skipped = ok(await tactical(second, "GET", `/events/reminders/${late.uuid}`));
    assert.equal(skipped.steps.REMINDER.status, "skipped");
    assert.equal(skipped.steps.REMINDER.reason, "time_passed");
    await second.stop();
  });
});
