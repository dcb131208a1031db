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
});
