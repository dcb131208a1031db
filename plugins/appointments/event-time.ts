import { DateTime, Duration, IANAZone } from "luxon";

/** The longest `remindTimeOffset` or `followUpTimeOffset` accepted (a year of 365 days counts as one). */
export const MAX_OFFSET = Duration.fromObject({ days: 366 });

/** `Area/Location` (any depth) or `UTC`: the region/city form of interface 2.9. */
const ZONE_SHAPE = /^(?:[A-Za-z][A-Za-z0-9_+-]*\/)+[A-Za-z0-9_+-]+$|^UTC$/;

/** Zone names remembered per kit; beyond it the memory starts again (names are few, garbage is not). */
const REMEMBERED_ZONES = 1024;

/**
 * Recognises IANA time zone names in region/city form (`America/New_York`, any
 * letter case) or `UTC`. Asking ICU costs about half a millisecond (a new
 * `Intl.DateTimeFormat`), so answers are remembered, within a bound.
 */
export class TimeZoneNames {
  readonly #known = new Map<string, boolean>();

  isTimeZone(name: string): boolean {
    if (!ZONE_SHAPE.test(name)) return false;
    let valid = this.#known.get(name);
    if (valid === undefined) {
      valid = IANAZone.isValidZone(name);
      if (this.#known.size >= REMEMBERED_ZONES) this.#known.clear();
      this.#known.set(name, valid);
    }
    return valid;
  }
}

/**
 * ISO 8601 durations without a sign and with at least one component:
 * `PT3H`, `P1D`, `P1DT12H`, `PT90M`, `P1W`. Luxon alone also takes `PT` and `-PT3H`.
 */
const ISO_DURATION = /^P(?!$)(?:\d+(?:[.,]\d+)?[YMWD])*(?:T(?:\d+(?:[.,]\d+)?[HMS])+)?$/;

/** Parses an offset such as `PT3H`; undefined when it is not a non-negative ISO 8601 duration up to {@link MAX_OFFSET}. */
export function parseOffset(text: string): Duration | undefined {
  if (!ISO_DURATION.test(text)) return undefined;
  const duration = Duration.fromISO(text);
  if (!duration.isValid || duration.toMillis() > MAX_OFFSET.toMillis()) return undefined;
  return duration;
}

/** How a wall-clock time that does not name exactly one instant was read. */
export type WallClockAdjustment =
  /** The time does not exist (clocks jumped forward over it): read with the offset before the jump, so 02:30 becomes 03:30. */
  | "gap"
  /** The time exists twice (clocks went back): the earlier of the two instants. */
  | "overlap";

export interface EventTime {
  /** The instant, expressed in the subscriber's zone. */
  at: DateTime;
  adjustment?: WallClockAdjustment;
}

/** A trailing `Z` or `±hh`, `±hhmm`, `±hh:mm` after the time. */
const OFFSET_SUFFIX = /T[^Z+-]*(?:Z|[+-]\d{2}(?::?\d{2})?)$/i;
/** A calendar date and at least the hour: an appointment needs a time. */
const DATE_AND_TIME = /^\d{4}-?\d{2}-?\d{2}T\d{2}/;

/**
 * Resolves `eventDateTime` (interface 2.9) in the subscriber's zone. With an
 * offset (`Z`, `-05:00`) it is that instant. Without one it is a wall-clock time
 * in `zone`, resolved by luxon from the zone's rules:
 * - in a DST gap (02:30 on the night clocks jump from 02:00 to 03:00) the time
 *   is read with the offset in force before the jump: 02:30 EST, which is 03:30 EDT;
 * - in a DST overlap (01:30 on the night clocks fall back from 02:00 to 01:00)
 *   it is the first of the two 01:30s (EDT), so reminders err on the early side.
 * This is what RFC 5545 and Temporal's "compatible" disambiguation do.
 * Undefined when the text is not an ISO 8601 date and time.
 */
export function resolveEventDateTime(text: string, zone: string): EventTime | undefined {
  if (!DATE_AND_TIME.test(text)) return undefined;
  if (OFFSET_SUFFIX.test(text)) {
    const instant = DateTime.fromISO(text, { setZone: true });
    return instant.isValid ? { at: instant.setZone(zone) } : undefined;
  }
  const inZone = DateTime.fromISO(text, { zone });
  if (!inZone.isValid) return undefined;
  // The fields as written, read in a zone without transitions: luxon moves a time in a gap forward.
  const written = DateTime.fromISO(text, { zone: "utc" });
  if (!sameWallClock(inZone, written)) return { at: inZone, adjustment: "gap" };
  const candidates = inZone.getPossibleOffsets();
  if (candidates.length < 2) return { at: inZone };
  const earliest = candidates.reduce((first, candidate) => (candidate.toMillis() < first.toMillis() ? candidate : first));
  return { at: earliest, adjustment: "overlap" };
}

const WALL_CLOCK_FIELDS = ["year", "month", "day", "hour", "minute", "second", "millisecond"] as const;

function sameWallClock(a: DateTime, b: DateTime): boolean {
  return WALL_CLOCK_FIELDS.every((field) => a[field] === b[field]);
}

/**
 * The moment of a step: the event time minus (REMINDER) or plus (FOLLOW_UP)
 * an offset. Hours, minutes and seconds are elapsed time; days, weeks, months
 * and years are calendar units in the subscriber's zone (luxon's rule), so
 * `P1D` before 09:00 is 09:00 the day before even across a DST change, while
 * `PT24H` is exactly 24 hours.
 */
export function stepTime(event: DateTime, offset: Duration, direction: "before" | "after"): DateTime {
  return direction === "before" ? event.minus(offset) : event.plus(offset);
}

/** An epoch-ms instant as ISO 8601 in a zone, with its offset: `2026-03-08T12:00:00.000-04:00`. */
export function isoInZone(at: number, zone: string): string {
  return DateTime.fromMillis(at, { zone }).toISO() ?? new Date(at).toISOString();
}

/** The event's date and time for texts: `Sunday, March 8, 2026` and `3:00 PM`. */
export function eventDateAndTime(at: number, zone: string): { eventDate: string; eventTime: string } {
  const local = DateTime.fromMillis(at, { zone }).setLocale("en-US");
  // toFormat keeps a plain space before AM/PM (ICU's own formats use U+202F, which costs an SMS its GSM encoding).
  return { eventDate: local.toFormat("cccc, MMMM d, yyyy"), eventTime: local.toFormat("h:mm a") };
}
