import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { readPhoneNumber } from "../../../plugins/subscriptions/index.ts";

describe("readPhoneNumber", () => {
  it("normalises the formats real callers send to E.164, national numbers read as US", () => {
    for (const input of ["555-555-5555", "(555) 555-5555", "+15555555555", " +1 555 555 5555 ", "1-555-555-5555"]) {
      assert.equal(readPhoneNumber(input)?.e164, "+15555555555", input);
    }
    assert.equal(readPhoneNumber("+44 7400 123456")?.e164, "+447400123456");
  });

  it("finds the region from the number itself, not from its calling code", () => {
    const regions = Object.fromEntries(
      ["+19148440001", "+15145550123", "+18765551234", "+17875550123", "+447400123456", "+447911123456", "+33612345678"].map((phone) => [phone, readPhoneNumber(phone)?.region]),
    );
    assert.deepEqual(regions, {
      "+19148440001": "US",
      "+15145550123": "CA",
      "+18765551234": "JM",
      "+17875550123": "PR",
      "+447400123456": "GB",
      "+447911123456": "GG",
      "+33612345678": "FR",
    });
    const fictitious = readPhoneNumber("555-555-5555");
    assert.deepEqual(fictitious, { e164: "+15555555555", callingCode: "1" }, "no region assigns the 555 area code");
  });

  it("refuses what cannot be a phone number", () => {
    for (const input of ["", "   ", "abc", "123", "555-5555", "+1555555555555555", "1".repeat(65)]) {
      assert.equal(readPhoneNumber(input), undefined, input);
    }
  });
});
