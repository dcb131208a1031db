import { DateTime, IANAZone } from "luxon";

/** Local wall-clock times `HH:MM`; quiet from `start` until `end` (across midnight when `end` is earlier). */
export interface QuietHours {
  start: string;
  end: string;
}

/** 8 PM to 11 AM in the person's time zone. */
export const DEFAULT_QUIET_HOURS: QuietHours = { start: "20:00", end: "11:00" };

const CLOCK_TIME = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** Minutes after midnight of `HH:MM`; undefined when it is not one. */
export function clockMinutes(text: string): number | undefined {
  const match = CLOCK_TIME.exec(text);
  return match ? Number(match[1]) * 60 + Number(match[2]) : undefined;
}

export function isTimeZone(name: string): boolean {
  return IANAZone.isValidZone(name);
}

/**
 * When quiet hours end, if `at` falls inside them in `zone`; undefined when a
 * message may go now. Wall-clock times are read in the zone by luxon, so the
 * end is right across a DST change (11:00 the morning after the clocks moved
 * is still 11:00 local).
 */
export function quietUntil(at: number, zone: string, hours: QuietHours): number | undefined {
  const start = clockMinutes(hours.start)!;
  const end = clockMinutes(hours.end)!;
  if (start === end) return undefined;
  const local = DateTime.fromMillis(at, { zone });
  const minutes = local.hour * 60 + local.minute;
  const inside = start < end ? minutes >= start && minutes < end : minutes >= start || minutes < end;
  if (!inside) return undefined;
  const endsTomorrow = minutes >= end;
  const day = endsTomorrow ? local.startOf("day").plus({ days: 1 }) : local.startOf("day");
  return day.set({ hour: Math.floor(end / 60), minute: end % 60, second: 0, millisecond: 0 }).toMillis();
}

/** The start of the local day of `at` in `zone` (the frequency cap counts per local day). */
export function startOfLocalDay(at: number, zone: string): number {
  return DateTime.fromMillis(at, { zone }).startOf("day").toMillis();
}

/**
 * The first instant of `[start, end]` inside quiet hours in `zone`, or
 * undefined when the whole span is outside them: a campaign's estimate warns
 * with it.
 */
export function quietHoursOverlap(start: number, end: number, zone: string, hours: QuietHours): number | undefined {
  if (quietUntil(start, zone, hours) !== undefined) return start;
  const begin = clockMinutes(hours.start)!;
  if (begin === clockMinutes(hours.end)) return undefined;
  const local = DateTime.fromMillis(start, { zone });
  let next = local.startOf("day").set({ hour: Math.floor(begin / 60), minute: begin % 60 });
  if (next.toMillis() <= start) next = next.plus({ days: 1 });
  return next.toMillis() <= end ? next.toMillis() : undefined;
}
