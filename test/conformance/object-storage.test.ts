import { join } from "node:path";
import { after, before } from "node:test";
import { fsObjectStorage } from "../../adapters/object-storage/fs/index.ts";
import { memoryObjectStorage } from "../../adapters/object-storage/memory/index.ts";
import { s3ObjectStorage } from "../../adapters/object-storage/s3/index.ts";
import { objectStorageConformance } from "../../src/testkit/index.ts";
import { putToUrl, startS3Server, type TestS3Server } from "../support/s3-server.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";

const secret = "object-storage-secret-object-storage-0123";

objectStorageConformance("memory", (clock) => ({ storage: memoryObjectStorage({ clock, secret }) }));

const root = temporaryDirectory("objects");
let directories = 0;
// A new directory per test: the suite expects an empty store every time.
objectStorageConformance("fs", (clock) => ({
  storage: fsObjectStorage({ directory: join(root, `store-${++directories}`), baseUrl: "http://localhost:3000", secret, clock }),
}));

let s3: TestS3Server;
before(async () => {
  s3 = await startS3Server();
});
after(() => s3.close());
let prefixes = 0;
// A key prefix of its own per test: the suite expects an empty store every time.
objectStorageConformance(
  "s3",
  (clock) => ({
    storage: s3ObjectStorage({ bucket: s3.bucket, prefix: `run-${++prefixes}/`, endpoint: s3.endpoint, region: "us-east-1", credentials: s3.credentials, clock }),
    send: putToUrl,
  }),
  { uploadsToStore: true },
);
