import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseOffset, resolveEventDateTime, TimeZoneNames } from "../../../plugins/appointments/index.ts";
import { eventDateAndTime, stepTime } from "../../../plugins/appointments/event-time.ts";
import { macrosOf } from "../../../plugins/appointments/index.ts";

const resolved = (text: string, zone: string) => {
  const event = resolveEventDateTime(text, zone);
  return event && { at: event.at.toISO(), utc: event.at.toUTC().toISO(), adjustment: event.adjustment };
};

describe("event times and offsets", () => {
  it("accepts IANA zone names in region/city form (any letter case) and UTC; nothing else", () => {
    const zones = new TimeZoneNames();
    for (const good of ["America/New_York", "america/new_york", "America/Argentina/Buenos_Aires", "Etc/GMT+5", "UTC"]) assert.equal(zones.isTimeZone(good), true, good);
    for (const bad of ["Mars/Olympus", "EST", "+05:00", "", "America/", "New York", "utc/"]) assert.equal(zones.isTimeZone(bad), false, bad);
    assert.equal(zones.isTimeZone("Mars/Olympus"), false, "remembered answers stay right");
    assert.equal(zones.isTimeZone("America/New_York"), true);
  });

  it("parses non-negative ISO 8601 durations up to 366 days", () => {
    assert.equal(parseOffset("PT3H")?.toMillis(), 3 * 3_600_000);
    assert.equal(parseOffset("PT90M")?.toMillis(), 90 * 60_000);
    assert.equal(parseOffset("P1DT12H")?.toISO(), "P1DT12H");
    assert.equal(parseOffset("PT0S")?.toMillis(), 0);
    assert.equal(parseOffset("P1W")?.toISO(), "P1W");
    for (const bad of ["3 hours", "PT", "P", "-PT3H", "PT-3H", "pt3h", "P2Y", "3600", "PT3H ", "P1DT"]) assert.equal(parseOffset(bad), undefined, bad);
  });

  it("reads a wall-clock time in the zone: normal, in the spring-forward gap (moved on by the gap), in the fall-back overlap (the earlier instant)", () => {
    assert.deepEqual(resolved("2026-03-08T15:00", "America/New_York"), { at: "2026-03-08T15:00:00.000-04:00", utc: "2026-03-08T19:00:00.000Z", adjustment: undefined });
    assert.deepEqual(resolved("2026-03-08T02:30", "America/New_York"), { at: "2026-03-08T03:30:00.000-04:00", utc: "2026-03-08T07:30:00.000Z", adjustment: "gap" });
    assert.deepEqual(resolved("2026-11-01T01:30", "America/New_York"), { at: "2026-11-01T01:30:00.000-04:00", utc: "2026-11-01T05:30:00.000Z", adjustment: "overlap" });
    // The southern hemisphere and Europe, by the same rules.
    assert.deepEqual(resolved("2026-04-05T02:30", "Australia/Sydney"), { at: "2026-04-05T02:30:00.000+11:00", utc: "2026-04-04T15:30:00.000Z", adjustment: "overlap" });
    assert.deepEqual(resolved("2026-03-29T01:30", "Europe/London"), { at: "2026-03-29T02:30:00.000+01:00", utc: "2026-03-29T01:30:00.000Z", adjustment: "gap" });
  });

  it("takes an offset as that instant, shown in the zone; refuses what is not a date and a time", () => {
    assert.deepEqual(resolved("2026-03-08T15:00:00Z", "America/New_York"), { at: "2026-03-08T11:00:00.000-04:00", utc: "2026-03-08T15:00:00.000Z", adjustment: undefined });
    assert.equal(resolved("2026-03-08T15:00:00.000-0500", "Europe/Paris")?.utc, "2026-03-08T20:00:00.000Z");
    assert.equal(resolved("2026-03-08T15:00+05", "UTC")?.utc, "2026-03-08T10:00:00.000Z");
    assert.equal(resolved("20260308T1500", "UTC")?.utc, "2026-03-08T15:00:00.000Z");
    for (const bad of ["2026-13-40T25:00", "2026-03-08", "2026-02-30T10:00", "March 8 2026 3pm", "2026-03-08 15:00", "T15:00", ""]) assert.equal(resolveEventDateTime(bad, "UTC"), undefined, bad);
  });

  it("steps: hours are elapsed time across a DST change, days are calendar days in the zone", () => {
    const event = resolveEventDateTime("2026-03-08T09:00", "America/New_York")!.at;
    assert.equal(stepTime(event, parseOffset("PT24H")!, "before").toISO(), "2026-03-07T08:00:00.000-05:00");
    assert.equal(stepTime(event, parseOffset("P1D")!, "before").toISO(), "2026-03-07T09:00:00.000-05:00");
    assert.equal(stepTime(event, parseOffset("PT24H")!, "after").toISO(), "2026-03-09T09:00:00.000-04:00");
  });

  it("formats the event date and time for texts with plain spaces (GSM-7 friendly)", () => {
    const at = Date.parse("2026-03-08T19:00:00Z");
    assert.deepEqual(eventDateAndTime(at, "America/New_York"), { eventDate: "Sunday, March 8, 2026", eventTime: "3:00 PM" });
    assert.deepEqual(eventDateAndTime(at, "Europe/Paris"), { eventDate: "Sunday, March 8, 2026", eventTime: "8:00 PM" });
  });
});

describe("macros", () => {
  it("lists each {name} once in order; other braces are text", () => {
    assert.deepEqual(macrosOf("Hi {firstName}, {service} at {time}; {firstName}! { spaced } {1x} {} {a-b} {_ok}"), ["firstName", "service", "time", "_ok"]);
    assert.deepEqual(macrosOf("no macros"), []);
  });
});
