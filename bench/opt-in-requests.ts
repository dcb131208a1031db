// The opt-ins bench/subscriptions.ts posts: fresh phones (each request a number never seen before, the
// sign-ups a company's form brings) and repeats (phones already subscribed, opting in again).
import type autocannon from "autocannon";

const PATH = "/v1/subscriptions";
const bodyOf = (phone: string) => JSON.stringify({ user: { phone }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING" });

/** First of the fresh numbers: +1 700 000 0000 and up, apart from the seeded (+1 555) and the test numbers. */
const FRESH_FROM = 7_000_000_000;
let freshCount = 0;

/** A phone no earlier call of this process returned: +1 and ten digits, as libphonenumber reads a possible US number. */
export function freshPhone(): string {
  return `+1${FRESH_FROM + freshCount++}`;
}

/** One request that autocannon repeats, each time with a fresh phone (setupRequest runs before every send). */
export function freshOptIns(): autocannon.Request[] {
  return [{ method: "POST", path: PATH, setupRequest: (request) => ({ ...request, body: bodyOf(freshPhone()) }) }];
}

/** Opt-ins of `phones` in turn: once the first round is through, each is a repeat. */
export function repeatedOptIns(phones: readonly string[]): autocannon.Request[] {
  return phones.map((phone) => ({ method: "POST", path: PATH, body: bodyOf(phone) }));
}
