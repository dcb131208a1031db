import { join } from "node:path";
import { memoryStorage } from "../../adapters/storage/memory/index.ts";
import { sqliteStorage } from "../../adapters/storage/sqlite/index.ts";
import type { Storage } from "../../src/index.ts";
import { temporaryDirectory } from "./temp-dir.ts";

/** The two storages a test runs without a server of its own, by name; each call makes a new one (SQLite in a new temporary directory named after `name`). */
export function localStorages(name: string): Record<"memory" | "sqlite", () => Storage> {
  return {
    memory: () => memoryStorage(),
    sqlite: () => sqliteStorage({ filename: join(temporaryDirectory(name), "kit.db") }),
  };
}
