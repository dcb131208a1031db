import { createRequire } from "node:module";
import type * as LibPhoneNumber from "libphonenumber-js/max";

/**
 * libphonenumber-js with its full metadata is about 9 MB of a process's
 * memory: it is loaded when the first number is read, not at start-up (a
 * server ingesting a catalog never reads one). `require` keeps loaded modules,
 * so later calls only look it up.
 */
const require = createRequire(import.meta.url);
const libPhoneNumber = () => require("libphonenumber-js/max") as typeof LibPhoneNumber;

/** A phone number read from what a caller wrote. */
export interface PhoneNumber {
  /** E.164: `+`, the country calling code, the national number. */
  e164: string;
  /** The country calling code, without `+` ("1", "44"). */
  callingCode: string;
  /**
   * The ISO 3166 region the number is assigned to by its numbering plan, found
   * from the number itself (`JM` for +1 876..., `GG` for a Guernsey +44 number);
   * undefined when no region's plan assigns it (e.g. the fictitious +1 555 area code).
   */
  region?: string;
}

/** Longer input is not a phone number; libphonenumber is not asked. */
const MAX_INPUT_LENGTH = 64;

/**
 * Reads a phone number as callers write it (`555-555-5555`, `(555) 555-5555`,
 * `+1 555 555 5555`, `+15555555555`), with libphonenumber-js and its full
 * metadata. A number without `+` is read in `defaultRegion` (an ISO 3166 code, default US). Undefined when
 * the text cannot be a phone number (wrong length for its country, letters).
 */
export function readPhoneNumber(input: string, defaultRegion = "US"): PhoneNumber | undefined {
  const text = input.trim();
  if (text === "" || text.length > MAX_INPUT_LENGTH) return undefined;
  const parsed = libPhoneNumber().parsePhoneNumberFromString(text, defaultRegion as LibPhoneNumber.CountryCode);
  if (!parsed?.isPossible()) return undefined;
  // `country` is the region whose plan the number is valid in: real detection, not the calling code.
  const region = parsed.isValid() ? parsed.country : undefined;
  return { e164: parsed.number, callingCode: parsed.countryCallingCode, ...(region ? { region } : {}) };
}
