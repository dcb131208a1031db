import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import { storageConformance } from "../../../src/testkit/index.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";

const directory = temporaryDirectory("sqlite-cache");
let files = 0;
const newFile = () => join(directory, `db-${++files}.sqlite`);

// A small page cache changes how much SQLite keeps in memory, never what it answers.
storageConformance("sqlite with a 64 KiB page cache", () => sqliteStorage({ filename: newFile(), cacheKiB: 64 }));

describe("sqliteStorage cacheKiB", () => {
  it("refuses a size that is not a whole number of at least 1", () => {
    for (const cacheKiB of [0, -5, 1.5, Number.NaN]) {
      assert.throws(() => sqliteStorage({ filename: newFile(), cacheKiB }), /cacheKiB must be a whole number of at least 1/);
    }
  });
});
