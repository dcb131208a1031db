export { postgresStorage, type PostgresStorageOptions } from "./postgres-storage.ts";
