import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { isJsonText } from "../../../plugins/catalog/json-syntax.ts";

const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/** Pieces JSON is made of, and the near misses around them. */
const piece = fc.constantFrom(
  ..."{}[],:\" \t\r\n\\/-+.0123456789eEabfnrtuxAF\u0000\u001f\u00a0\ufeff\ud800".split(""),
  "true",
  "false",
  "null",
  "tru",
  "nul",
  "\\u00e9",
  "\\u12",
  "\\x41",
  "01",
  "-0",
  "1e",
  "1.",
  ".5",
  "\"key\":",
);

/** A JSON text with a few pieces inserted, or a few characters dropped. */
const nearJson = fc
  .tuple(fc.json(), fc.array(fc.tuple(fc.nat(), fc.oneof(piece, fc.constant(""))), { maxLength: 3 }), fc.boolean())
  .map(([text, edits, drop]) =>
    edits.reduce((line, [at, inserted]) => {
      const position = at % (line.length + 1);
      return drop ? line.slice(0, position) + line.slice(position + 1) : line.slice(0, position) + inserted + line.slice(position);
    }, text),
  );

describe("the JSON syntax screen", () => {
  it("accepts exactly what JSON.parse accepts", () => {
    fc.assert(
      fc.property(fc.oneof(fc.json(), nearJson, fc.array(piece, { maxLength: 12 }).map((pieces) => pieces.join(""))), (text) => {
        assert.equal(isJsonText(text), parses(text), JSON.stringify(text));
      }),
      { numRuns: 20_000, seed: 20261125 },
    );
  });

  it("takes any depth of nesting, as JSON.parse does", () => {
    const deep = `${"[".repeat(200_000)}${"]".repeat(200_000)}`;
    assert.equal(isJsonText(deep), true);
    assert.equal(isJsonText(deep.slice(0, -1)), false);
    assert.equal(isJsonText(`${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`), true);
  });
});
