import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_QUIET_HOURS, quietUntil, startOfLocalDay, PhoneTimeZones } from "../../../plugins/send-rules/index.ts";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

describe("quiet hours", () => {
  it("defers a text in the evening to 11:00 local the next morning, and one before 11:00 to 11:00 the same day", () => {
    assert.equal(iso(quietUntil(at("2026-03-02T01:30:00Z"), "America/New_York", DEFAULT_QUIET_HOURS)), "2026-03-02T16:00:00.000Z");
    assert.equal(iso(quietUntil(at("2026-03-02T14:00:00Z"), "America/New_York", DEFAULT_QUIET_HOURS)), "2026-03-02T16:00:00.000Z");
    assert.equal(iso(quietUntil(at("2026-03-02T16:00:00Z"), "America/New_York", DEFAULT_QUIET_HOURS)), undefined);
    assert.equal(iso(quietUntil(at("2026-03-03T00:59:00Z"), "America/New_York", DEFAULT_QUIET_HOURS)), undefined);
    assert.equal(iso(quietUntil(at("2026-03-03T01:00:00Z"), "America/New_York", DEFAULT_QUIET_HOURS)), "2026-03-03T16:00:00.000Z");
  });

  it("ends at 11:00 local across the night the clocks spring forward and the night they fall back", () => {
    // 2026-03-08 02:00 EST → 03:00 EDT: 11:00 that morning is 15:00 UTC, not 16:00.
    assert.equal(iso(quietUntil(at("2026-03-08T02:00:00Z"), "America/New_York", DEFAULT_QUIET_HOURS)), "2026-03-08T15:00:00.000Z");
    // 2026-11-01 02:00 EDT → 01:00 EST: 11:00 that morning is 16:00 UTC.
    assert.equal(iso(quietUntil(at("2026-11-01T03:00:00Z"), "America/New_York", DEFAULT_QUIET_HOURS)), "2026-11-01T16:00:00.000Z");
    assert.equal(iso(quietUntil(at("2026-03-29T20:00:00Z"), "Europe/London", DEFAULT_QUIET_HOURS)), "2026-03-30T10:00:00.000Z");
  });

  it("takes hours that do not cross midnight, and none when start and end are equal", () => {
    const lunch = { start: "12:00", end: "13:30" };
    assert.equal(iso(quietUntil(at("2026-03-02T17:15:00Z"), "America/New_York", lunch)), "2026-03-02T18:30:00.000Z");
    assert.equal(iso(quietUntil(at("2026-03-02T19:00:00Z"), "America/New_York", lunch)), undefined);
    assert.equal(quietUntil(at("2026-03-02T03:00:00Z"), "America/New_York", { start: "09:00", end: "09:00" }), undefined);
  });

  it("counts the daily cap from local midnight", () => {
    assert.equal(iso(startOfLocalDay(at("2026-03-02T03:00:00Z"), "America/New_York")), "2026-03-01T05:00:00.000Z");
  });

  it("knows a number's zone when its region keeps one time, and no zone for a region with several", () => {
    const zones = new PhoneTimeZones();
    assert.equal(zones.zoneOf("+447911123456"), "Europe/London");
    assert.equal(zones.zoneOf("+4930123456"), "Europe/Berlin");
    assert.equal(zones.zoneOf("+12125550100"), undefined);
    assert.equal(zones.zoneOf("+15555550100"), undefined);
  });
});
