import { join } from "node:path";
import { memoryStorage } from "../../adapters/storage/memory/index.ts";
import { sqliteStorage } from "../../adapters/storage/sqlite/index.ts";
import { storageConformance } from "../../src/testkit/index.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";

storageConformance("memory", () => memoryStorage());

storageConformance("sqlite (:memory:)", () => sqliteStorage({ filename: ":memory:" }));

const directory = temporaryDirectory("storage");
let files = 0;
// A new file per test: the suite expects an empty store every time.
storageConformance("sqlite (file)", () => sqliteStorage({ filename: join(directory, `db-${++files}.sqlite`) }));
