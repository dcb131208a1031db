import { createRequire } from "node:module";
import type * as CountriesAndTimezones from "countries-and-timezones";
import type * as LibPhoneNumber from "libphonenumber-js/max";
import { DateTime } from "luxon";
import { injectable } from "../../src/index.ts";

const require = createRequire(import.meta.url);
// Loaded at the first number read, as the subscriptions plugin does: a server that sends no marketing text never pays for them.
const libPhoneNumber = () => require("libphonenumber-js/max") as typeof LibPhoneNumber;
const countries = () => require("countries-and-timezones") as typeof CountriesAndTimezones;

/** Regions remembered; beyond it the memory starts again. */
const REMEMBERED_REGIONS = 512;

/**
 * The time zone of a phone number's region, when the region keeps one time:
 * every zone of the region has the same offsets through the year (the United
 * Kingdom; Germany, whose Büsingen follows Zurich's rules). A region spanning
 * several (the United States, Canada, Australia) answers undefined: the
 * number alone does not say which.
 */
@injectable()
export class PhoneTimeZones {
  readonly #byRegion = new Map<string, string | undefined>();

  zoneOf(phone: string): string | undefined {
    const parsed = libPhoneNumber().parsePhoneNumberFromString(phone);
    const region = parsed?.isValid() ? parsed.country : undefined;
    if (region === undefined) return undefined;
    if (this.#byRegion.has(region)) return this.#byRegion.get(region);
    const zone = singleZone(countries().getTimezonesForCountry(region)?.map((zone) => zone.name) ?? []);
    if (this.#byRegion.size >= REMEMBERED_REGIONS) this.#byRegion.clear();
    this.#byRegion.set(region, zone);
    return zone;
  }
}

/** The first zone, when all of them keep the same offsets in January and July of this year; else undefined. */
function singleZone(zones: readonly string[]): string | undefined {
  if (zones.length === 0) return undefined;
  const year = DateTime.utc().year;
  const offsets = (zone: string) => [1, 7].map((month) => DateTime.utc(year, month, 15).setZone(zone).offset).join(",");
  const first = offsets(zones[0]!);
  return zones.every((zone) => offsets(zone) === first) ? zones[0] : undefined;
}
