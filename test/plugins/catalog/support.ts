import { catalogPlugin, type CatalogOptions } from "../../../plugins/catalog/index.ts";
import type { ReachkitConfigInput, Storage } from "../../../src/index.ts";
import { withCollectionMethod } from "../../support/storage-wrappers.ts";
import { defaultPlugins, startTestKit, type Json, type TestKit, type TestKitOptions } from "../../support/test-kit.ts";

export interface CatalogTestKit extends TestKit {
  /** POST /v1/product-catalog/uploads; answers the upload object. */
  createUpload(body?: unknown): Promise<Json>;
  /** PUT the file to the upload's URL (no bearer token, as a client does); answers the status. */
  sendFile(upload: Json, content: string | Buffer): Promise<number>;
  /** Runs the jobs that are due (processing), then answers GET /v1/product-catalog/uploads/{id}. */
  settle(upload: Json): Promise<Json>;
  /** createUpload + sendFile + settle. */
  upload(content: string | Buffer, body?: unknown): Promise<Json>;
}

/**
 * A test kit with the catalog plugin. Upload creation is not rate-limited
 * unless `config` says otherwise: tests make several uploads in one (fake) second.
 */
export async function startCatalogKit(
  options: { catalog?: CatalogOptions; storage?: Storage; config?: ReachkitConfigInput } & Pick<TestKitOptions, "clock" | "objectStorage"> = {},
): Promise<CatalogTestKit> {
  const config = options.config ?? { rateLimits: { "catalog-upload": Infinity } };
  const t = await startTestKit({
    plugins: [...defaultPlugins(), catalogPlugin(options.catalog)],
    storage: options.storage,
    config,
    clock: options.clock,
    objectStorage: options.objectStorage,
  });
  const kit: CatalogTestKit = {
    ...t,
    async createUpload(body) {
      const response = await t.request({ method: "POST", url: "/v1/product-catalog/uploads", body });
      if (response.status !== 200) throw new Error(`create answered ${response.status}: ${response.body}`);
      return t.json(response);
    },
    async sendFile(upload, content) {
      return (await t.request({ method: "PUT", url: pathOf(upload.uploadUrl), body: content, token: null })).status;
    },
    async settle(upload) {
      await t.scheduler.flush();
      return t.json(await t.request({ url: `/v1/product-catalog/uploads/${upload.uploadId}` }));
    },
    async upload(content, body) {
      const upload = await kit.createUpload(body);
      const status = await kit.sendFile(upload, content);
      if (status !== 200) throw new Error(`the file PUT answered ${status}`);
      return kit.settle(upload);
    },
  };
  return kit;
}

export const pathOf = (url: string) => {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
};

export interface VariantInput {
  id: string;
  available?: boolean;
  inventory?: number;
  prices?: Json[];
  [field: string]: unknown;
}

/** A valid variant, with overrides. */
export function variant({ id, available = true, inventory, prices, ...rest }: VariantInput): Json {
  return {
    id,
    name: `Variant ${id}`,
    link: `https://shop.example.com/v/${id}`,
    prices: prices ?? [{ currencyCode: "USD", amount: "20.00" }],
    availableForPurchase: available,
    ...(inventory === undefined ? {} : { inventoryQuantity: inventory }),
    lastUpdated: "2026-02-01T10:00:00Z",
    ...rest,
  };
}

/** A valid product with the given variants (default: one variant `<id>-v1`), with overrides. */
export function product(id: string, overrides: Json = {}): Json {
  return {
    id,
    name: `Product ${id}`,
    link: `https://shop.example.com/p/${id}`,
    lastUpdated: "2026-02-01T10:00:00Z",
    variants: [variant({ id: `${id}-v1` })],
    ...overrides,
  };
}

/** Lines of JSON, newline-terminated. */
export const ndjson = (...lines: unknown[]) => lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line))).join("\n") + "\n";

/**
 * A storage whose writes fail on demand: `failWhen` sees each upsertMany
 * (collection name, documents) and throws to make it fail. Everything else
 * goes to `inner` unchanged.
 */
export function failingStorage(inner: Storage, failWhen: (collection: string, docs: readonly unknown[]) => void): Storage {
  const failing = withCollectionMethod(inner, "upsertMany", (upsertMany, collection) => async (docs) => {
    failWhen(collection, docs);
    return upsertMany(docs);
  });
  return { ...failing, name: `failing ${inner.name}` };
}
