import { defineToken } from "../../src/index.ts";
import type { CatalogApi } from "./catalog-api.ts";
import type { CatalogStore } from "./catalog-store.ts";
import type { CatalogUploads } from "./catalog-uploads.ts";
import type { CatalogSettings } from "./settings.ts";
import type { UploadProcessor } from "./upload-processor.ts";

const PROVIDER = ["reachkit/plugins/catalog (catalogPlugin)"];
/** The plugin's options, defaults applied. */
export const CATALOG_SETTINGS = defineToken<CatalogSettings>("CatalogSettings", PROVIDER);
export const CATALOG_STORE = defineToken<CatalogStore>("CatalogStore", PROVIDER);
export const CATALOG_UPLOADS = defineToken<CatalogUploads>("CatalogUploads", PROVIDER);
export const CATALOG_UPLOAD_PROCESSOR = defineToken<UploadProcessor>("CatalogUploadProcessor", PROVIDER);
/** The catalog's in-process service (`kit.plugin("catalog")`), for other plugins. */
export const CATALOG_API = defineToken<CatalogApi>("CatalogApi", PROVIDER);
