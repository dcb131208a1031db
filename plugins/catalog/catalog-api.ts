import type { EventBus, EventHandler } from "../../src/index.ts";
import type { CatalogStore, CatalogVariantRecord } from "./catalog-store.ts";
import { uploadWithCounts, type CatalogUpload, type CatalogUploads } from "./catalog-uploads.ts";
import type { JourneyEventName } from "./journey-events.ts";
import type { CatalogProduct } from "./product-schema.ts";
import type { VariantState } from "./records.ts";

/** The most products one page holds, and the most changes a variant's history gives. */
export const MAX_PRODUCT_PAGE = 200;
export const MAX_VARIANT_HISTORY = 500;

/** A save that changed a variant's lowest price in a currency, its stock or its availability. */
export interface VariantChange {
  productId: string;
  variantId: string;
  /** The upload whose save made the change. */
  uploadId: string;
  /** ISO 8601: when the save read the line. */
  at: string;
  before: VariantState;
  after: VariantState;
}

/** The catalog plugin's in-process service: `kit.plugin("catalog")`. Every call is scoped to one company. */
export interface CatalogApi {
  /** A product as last saved, with every variant it has in the catalog. */
  getProduct(companyId: string, productId: string): Promise<CatalogProduct | undefined>;
  getVariant(companyId: string, variantId: string): Promise<CatalogVariantRecord | undefined>;
  /** Starts an upload, as `POST /v1/product-catalog/uploads` does. */
  createUpload(companyId: string, options?: { validateOnly?: boolean }): Promise<CatalogUpload>;
  getUpload(companyId: string, uploadId: string): Promise<CatalogUpload | undefined>;
  /** The most recent uploads (default: the plugin's listLimit), oldest first. */
  listUploads(companyId: string, options?: { limit?: number }): Promise<CatalogUpload[]>;
  /**
   * A page of the catalog's products in id order (default 50, at most
   * {@link MAX_PRODUCT_PAGE}), those whose id starts with `search` when given;
   * `nextCursor` (a product id) continues after the page.
   */
  listProducts(companyId: string, options?: { search?: string; after?: string; limit?: number }): Promise<{ items: CatalogProduct[]; nextCursor?: string }>;
  /**
   * How a variant's lowest price per currency, stock and availability changed,
   * newest first: one entry per save that changed any of them (the first save
   * of a variant is its starting point, not a change).
   */
  variantHistory(companyId: string, variantId: string, options?: { limit?: number }): Promise<VariantChange[]>;
  /** Listens to a journey event of every company; returns the function that stops listening. */
  onJourneyEvent<K extends JourneyEventName>(name: K, listener: EventHandler<K>): () => void;
}

export function catalogApi(store: CatalogStore, uploads: CatalogUploads, events: EventBus): CatalogApi {
  return {
    getProduct: (companyId, productId) => store.getProduct(companyId, productId),
    getVariant: (companyId, variantId) => store.getVariant(companyId, variantId),
    createUpload: async (companyId, options) => uploadWithCounts(await uploads.create(companyId, options)),
    async getUpload(companyId, uploadId) {
      const upload = await uploads.get(companyId, uploadId);
      return upload && uploadWithCounts(upload);
    },
    listUploads: async (companyId, options) => (await uploads.list(companyId, options?.limit)).map(uploadWithCounts),
    async listProducts(companyId, options = {}) {
      const limit = Math.min(Math.max(Math.trunc(options.limit ?? 50), 1), MAX_PRODUCT_PAGE);
      const page = await store.productPage(companyId, { prefix: options.search || undefined, after: options.after, limit });
      return { items: page.items, ...(page.next !== undefined ? { nextCursor: page.next } : {}) };
    },
    async variantHistory(companyId, variantId, options = {}) {
      const limit = Math.min(Math.max(Math.trunc(options.limit ?? 100), 1), MAX_VARIANT_HISTORY);
      return (await store.variantChanges(companyId, variantId, limit)).map((row) => ({
        productId: row.productId,
        variantId: row.variantId,
        uploadId: row.uploadId,
        at: new Date(row.at).toISOString(),
        before: row.before,
        after: row.after,
      }));
    },
    onJourneyEvent: (name, listener) => events.on(name, listener),
  };
}
