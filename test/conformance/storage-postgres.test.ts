import { postgresStorage } from "../../adapters/storage/postgres/index.ts";
import { storageConformance } from "../../src/testkit/index.ts";
import { usePostgresDatabase } from "../support/postgres.ts";

const databaseUrl = usePostgresDatabase();

// A new schema per test (much cheaper than a database): the suite expects an empty store every time.
let schemas = 0;
storageConformance("postgres", () => postgresStorage({ url: databaseUrl(), schema: `suite_${++schemas}`, poolSize: 4 }));
