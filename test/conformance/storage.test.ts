import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { memoryStorage } from "../../adapters/storage/memory/index.ts";
import { sqliteStorage } from "../../adapters/storage/sqlite/index.ts";
import { storageConformance } from "../../src/testkit/index.ts";

storageConformance("memory", () => memoryStorage());

storageConformance("sqlite (:memory:)", () => sqliteStorage({ filename: ":memory:" }));

const directory = mkdtempSync(join(tmpdir(), "reachkit-storage-"));
let files = 0;
after(() => rmSync(directory, { recursive: true, force: true }));
// A new file per test: the suite expects an empty store every time.
storageConformance("sqlite (file)", () => sqliteStorage({ filename: join(directory, `db-${++files}.sqlite`) }));
