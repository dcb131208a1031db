export { catalogPlugin, CATALOG_STORE, CATALOG_UPLOADS, CATALOG_UPLOAD_PROCESSOR } from "./catalog-plugin.ts";
export type { CatalogApi } from "./catalog-api.ts";
export type { CatalogOptions } from "./settings.ts";
export { DEFAULT_CATALOG_SETTINGS, type CatalogSettings } from "./settings.ts";
export type { CatalogUpload, CatalogUploadView } from "./catalog-uploads.ts";
export type { CatalogStore, CatalogVariantRecord } from "./catalog-store.ts";
export type { CatalogUploads } from "./catalog-uploads.ts";
export type { UploadProcessor } from "./upload-processor.ts";
export type { CatalogUploadError, UploadStatus } from "./records.ts";
export { CATALOG_ERROR_TYPES, type CatalogErrorType } from "./line-check.ts";
export {
  CATALOG_FIELD_LIMITS,
  type CatalogProduct,
  type CatalogVariant,
  type CatalogPrice,
  type CatalogImage,
  type CatalogAttribute,
  type CatalogProductOption,
  type CatalogProductOptionValue,
} from "./product-schema.ts";
export {
  JOURNEY_EVENTS,
  type JourneyEventName,
  type CatalogVariantEvent,
  type BackInStockEvent,
  type LowInventoryEvent,
  type PriceDroppedEvent,
  type PricePoint,
  type ProductSummary,
} from "./journey-events.ts";
