import { join } from "node:path";
import { fsObjectStorage } from "../../adapters/object-storage/fs/index.ts";
import { memoryObjectStorage } from "../../adapters/object-storage/memory/index.ts";
import { objectStorageConformance } from "../../src/testkit/index.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";

const secret = "object-storage-secret-object-storage-0123";

objectStorageConformance("memory", (clock) => ({ storage: memoryObjectStorage({ clock, secret }) }));

const root = temporaryDirectory("objects");
let directories = 0;
// A new directory per test: the suite expects an empty store every time.
objectStorageConformance("fs", (clock) => ({
  storage: fsObjectStorage({ directory: join(root, `store-${++directories}`), baseUrl: "http://localhost:3000", secret, clock }),
}));
