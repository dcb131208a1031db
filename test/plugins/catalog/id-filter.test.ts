import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { IdFilter } from "../../../plugins/catalog/id-filter.ts";

describe("IdFilter", () => {
  it("answers maybe for every id added, and certainly-not for nearly every other", () => {
    const filter = new IdFilter(20);
    const added = Array.from({ length: 100_000 }, (_, index) => `prod-${index}-xs`);
    for (const id of added) filter.add(id);
    assert.ok(added.every((id) => filter.mightHave(id)));
    const others = Array.from({ length: 100_000 }, (_, index) => `prod-${index}-xl`);
    const maybe = others.filter((id) => filter.mightHave(id)).length;
    // 100,000 ids in 2^20 bits with 3 hashes: about 2% false positives.
    assert.ok(maybe < 4_000, `${maybe} false positives`);
  });

  it("starts empty", () => assert.equal(new IdFilter(10).mightHave("a"), false));

  it("adds an id and answers at once what mightHave answered before it", () => {
    const filter = new IdFilter(20);
    assert.equal(filter.add("prod-1"), false);
    assert.equal(filter.add("prod-1"), true);
    assert.equal(filter.mightHave("prod-1"), true);
    const answers = Array.from({ length: 1_000 }, (_, index) => filter.add(`prod-${index + 2}`));
    assert.ok(answers.filter(Boolean).length < 10, "new ids are nearly always certainly-not");
  });
});
