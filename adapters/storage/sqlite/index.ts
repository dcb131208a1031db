export { sqliteStorage, type SqliteStorageOptions } from "./sqlite-storage.ts";
