export { catalogPlugin } from "./catalog-plugin.ts";
export { MAX_PRODUCT_PAGE, MAX_VARIANT_HISTORY, type CatalogApi, type VariantChange } from "./catalog-api.ts";
export type { VariantState } from "./records.ts";
export { CATALOG_API } from "./tokens.ts";
/** The upload id of the API reference's examples, for plugins whose examples follow an upload (the console). */
export { EXAMPLE_UPLOAD_ID } from "./openapi.ts";
export { DEFAULT_CATALOG_SETTINGS, type CatalogOptions, type CatalogSettings } from "./settings.ts";
export type { CatalogUpload, CatalogUploadView } from "./catalog-uploads.ts";
export type { CatalogVariantRecord, CatalogStore, ProductVersions, StoredProduct } from "./catalog-store.ts";
export { CATALOG_STORE } from "./tokens.ts";
export type { CatalogUploadError, UploadStatus, PendingEventRow, ProductRow, VariantHint, VariantChangeRow } from "./records.ts";
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
