// bench/subscriptions.ts's main opt-in figure is of fresh phones: each request must name a number never posted
// before, one that reachkit reads as a phone (else the bench measures 400s or repeats).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type autocannon from "autocannon";
import { freshOptIns, repeatedOptIns } from "../../bench/opt-in-requests.ts";
import { readPhoneNumber } from "../../plugins/subscriptions/phone-numbers.ts";

const phoneOf = (request: autocannon.Request) => (JSON.parse(request.body as string) as { user: { phone: string } }).user.phone;

describe("bench opt-in requests", () => {
  it("fresh opt-ins name a new phone at every request, each one reachkit reads as itself", () => {
    const [request] = freshOptIns();
    const setup = request!.setupRequest as (request: autocannon.Request, context: object) => autocannon.Request;
    const phones = Array.from({ length: 2000 }, () => phoneOf(setup(request!, {})));
    // A second set of requests (the next round) goes on with new numbers too.
    const [next] = freshOptIns();
    phones.push(phoneOf((next!.setupRequest as typeof setup)(next!, {})));
    assert.equal(new Set(phones).size, phones.length);
    for (const phone of phones) assert.equal(readPhoneNumber(phone)?.e164, phone);
  });

  it("repeated opt-ins post the given phones in turn", () => {
    const phones = ["+15550000001", "+15550000002"];
    assert.deepEqual(repeatedOptIns(phones).map(phoneOf), phones);
  });
});
