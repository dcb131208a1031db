import { describe } from "node:test";
import type { Storage } from "../../ports/storage.ts";
import { collectionTests } from "./collections.ts";
import { concurrencyTests } from "./concurrency.ts";
import { documentTests } from "./documents.ts";
import { findFieldsTests } from "./find-fields.ts";
import { holdTests } from "./holds.ts";
import { lifecycleTests } from "./lifecycle.ts";
import { orderingAndPagingTests } from "./ordering-and-paging.ts";
import { SPECS } from "./shared.ts";
import { sparseIndexTests } from "./sparse-indexes.ts";
import { transactionTests } from "./transactions.ts";
import { uniqueConstraintTests } from "./unique-constraints.ts";
import { updateEachTests } from "./update-each.ts";
import { updateTests } from "./updates.ts";
import { whereTests } from "./where.ts";

/**
 * The behaviour every Storage adapter must share, written against the port
 * only. An adapter author calls it from a test file:
 *
 *     storageConformance("postgres", () => postgresStorage({ url }));
 *
 * Each test gets a fresh storage from `makeStorage` and closes it afterwards,
 * so `makeStorage` must return an empty store every time.
 *
 * Where the port leaves a choice open, this suite pins down the reference
 * behaviour (the SQLite adapter's): values compare the way SQLite compares
 * `json_extract` results (NULL < numbers, booleans as 1/0 < text by code
 * point), and a nested transaction that throws undoes only its own writes.
 */
export function storageConformance(adapterName: string, makeStorage: () => Promise<Storage> | Storage): void {
  async function withStorage(body: (storage: Storage) => Promise<void>): Promise<void> {
    const storage = await makeStorage();
    try {
      await storage.ensureCollections(SPECS);
      await body(storage);
    } finally {
      await storage.close();
    }
  }

  describe(`Storage conformance: ${adapterName}`, () => {
    collectionTests(withStorage);
    documentTests(withStorage);
    uniqueConstraintTests(withStorage);
    sparseIndexTests(withStorage);
    whereTests(withStorage);
    orderingAndPagingTests(withStorage);
    findFieldsTests(withStorage);
    updateTests(withStorage);
    updateEachTests(withStorage);
    transactionTests(withStorage);
    concurrencyTests(withStorage);
    holdTests(withStorage);
    lifecycleTests(makeStorage);
  });
}
