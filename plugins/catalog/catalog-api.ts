import type { EventBus, EventHandler } from "../../src/index.ts";
import type { CatalogStore, CatalogVariantRecord } from "./catalog-store.ts";
import { uploadWithCounts, type CatalogUpload, type CatalogUploads } from "./catalog-uploads.ts";
import type { JourneyEventName } from "./journey-events.ts";
import type { CatalogProduct } from "./product-schema.ts";

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
    onJourneyEvent: (name, listener) => events.on(name, listener),
  };
}
