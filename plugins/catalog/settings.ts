/** Options of `catalogPlugin()`; every one has a default (see the README). */
export interface CatalogOptions {
  /** How long an upload URL takes a file (`expires`). Default 1 hour. */
  uploadWindowMs?: number;
  /** Largest file accepted (413 above). Default 2 GiB. */
  maxFileBytes?: number;
  /** Longest line accepted; a longer one is a LINE_TOO_LONG error. Default 4 MiB. */
  maxLineBytes?: number;
  /** Errors kept per errorType in an upload's `errors` (counts stay exact). Default 10. */
  errorsPerType?: number;
  /**
   * A file whose first this many lines hold no product (each one blank or
   * with errors) is read no further: the upload is `failed` with a
   * NO_PRODUCTS entry. Default 100,000.
   */
  maxLinesWithoutProduct?: number;
  /** `catalog.variant.low_inventory` fires when inventoryQuantity falls to or below this. Default 10. */
  lowInventoryThreshold?: number;
  /** Products written per storage transaction. Default 200 (larger batches hold more memory for no gain). */
  batchSize?: number;
  /** Uploads listed by `GET /v1/product-catalog/uploads` (the most recent ones, oldest first). Default 100. */
  listLimit?: number;
  /** Attempts of a processing job before the upload is marked failed. Default 3. */
  maxAttempts?: number;
  /** How often an upload waiting for an earlier upload of its company looks again. Default 1 second. */
  queuePollMs?: number;
  /**
   * With object storage that clients upload to directly (S3), how often an
   * upload looks in the bucket for its file until `expires`. Default 5 seconds.
   */
  uploadPollMs?: number;
}

export type CatalogSettings = Required<CatalogOptions>;

export const DEFAULT_CATALOG_SETTINGS: CatalogSettings = {
  uploadWindowMs: 3_600_000,
  maxFileBytes: 2 * 1024 ** 3,
  maxLineBytes: 4 * 1024 ** 2,
  errorsPerType: 10,
  maxLinesWithoutProduct: 100_000,
  lowInventoryThreshold: 10,
  batchSize: 200,
  listLimit: 100,
  maxAttempts: 3,
  queuePollMs: 1_000,
  uploadPollMs: 5_000,
};

export function resolveCatalogSettings(options: CatalogOptions = {}): CatalogSettings {
  const settings = { ...DEFAULT_CATALOG_SETTINGS, ...options };
  for (const [name, value] of Object.entries(settings)) {
    const least = name === "lowInventoryThreshold" ? 0 : 1;
    if (!Number.isSafeInteger(value) || value < least) throw new Error(`catalogPlugin: ${name} must be a whole number of at least ${least}, got ${String(value)}`);
  }
  return settings;
}
