import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { fsObjectStorage } from "../../adapters/object-storage/fs/index.ts";
import { memoryObjectStorage } from "../../adapters/object-storage/memory/index.ts";
import { objectStorageConformance } from "../../src/testkit/index.ts";

const secret = "object-storage-secret-object-storage-0123";

objectStorageConformance("memory", (clock) => ({ storage: memoryObjectStorage({ clock, secret }) }));

const root = mkdtempSync(join(tmpdir(), "reachkit-objects-"));
let directories = 0;
after(() => rmSync(root, { recursive: true, force: true }));
// A new directory per test: the suite expects an empty store every time.
objectStorageConformance("fs", (clock) => ({
  storage: fsObjectStorage({ directory: join(root, `store-${++directories}`), baseUrl: "http://localhost:3000", secret, clock }),
}));
