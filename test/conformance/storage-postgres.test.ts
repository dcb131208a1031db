import { after, before } from "node:test";
import { postgresStorage } from "../../adapters/storage/postgres/index.ts";
import { storageConformance } from "../../src/testkit/index.ts";
import { startPostgres, type PostgresCluster } from "../support/postgres.ts";

let cluster: PostgresCluster;
let url: string;
before(async () => {
  cluster = await startPostgres();
  url = await cluster.createDatabase();
});
after(() => cluster.stop());

// A new schema per test (much cheaper than a database): the suite expects an empty store every time.
let schemas = 0;
storageConformance("postgres", () => postgresStorage({ url, schema: `suite_${++schemas}`, poolSize: 4 }));
