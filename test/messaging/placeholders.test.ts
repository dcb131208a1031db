import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fillPlaceholders, placeholdersOf } from "../../src/index.ts";

describe("message placeholders", () => {
  it("lists each {name} once in order; other braces are text", () => {
    assert.deepEqual(placeholdersOf("Hi {firstName}, {service} at {time}; {firstName}! { spaced } {1x} {} {a-b} {_ok}"), ["firstName", "service", "time", "_ok"]);
    assert.deepEqual(placeholdersOf("no placeholders"), []);
  });

  it("fills the names it has values for and leaves the others as written", () => {
    assert.equal(fillPlaceholders("Hi {firstName}, {other} {{firstName}}", { firstName: "Ada" }), "Hi Ada, {other} {Ada}");
    assert.equal(fillPlaceholders("{company}: {contact}", { company: "Acme", contact: "" }), "Acme: ");
  });

  it("never takes a value from the prototype", () => {
    assert.equal(fillPlaceholders("{toString} {constructor} {__proto__}", {}), "{toString} {constructor} {__proto__}");
  });
});
