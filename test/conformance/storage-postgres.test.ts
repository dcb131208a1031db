import { after, before } from "node:test";
import { postgresStorage } from "../../adapters/storage/postgres/index.ts";
import { storageConformance } from "../../src/testkit/index.ts";
import { startPostgres, type PostgresCluster } from "../support/postgres.ts";

let cluster: PostgresCluster;
before(async () => {
  cluster = await startPostgres();
});
after(() => cluster.stop());

// A new database per test: the suite expects an empty store every time.
storageConformance("postgres", async () => postgresStorage({ url: await cluster.createDatabase(), poolSize: 4 }));
