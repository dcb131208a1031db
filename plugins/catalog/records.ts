import type { CollectionSpec, Doc } from "../../src/index.ts";
import type { CatalogErrorType } from "./line-check.ts";
import type { CatalogProduct } from "./product-schema.ts";

/**
 * How the catalog is stored. Each saving upload writes its products (each
 * with its variants: a line is one complete product) as rows of a new catalog
 * version; the version becomes visible all at once when the company's head
 * moves to it (one small transaction). Readers
 * take, per id, the newest row at or below the head. So a save is all or
 * nothing while its writes go in batches of ordinary transactions, and no
 * reader or writer waits for a long save.
 */

/** initialized → validating → validated → completed; failed (save failed) and expired (no file in time) end early. */
export type UploadStatus = "initialized" | "validating" | "validated" | "completed" | "failed" | "expired";

/** One entry of an upload's `errors`. */
export interface CatalogUploadError {
  errorType: CatalogErrorType;
  errorMessage: string;
  /** 1-based line of the file; 0 for a problem of the whole upload (a failed save). */
  lineNum: number;
}

export interface UploadRecord extends Doc {
  companyId: string;
  status: UploadStatus;
  validateOnly: boolean;
  /** Capped per error type; `errorCounts` has the exact counts. */
  errors: CatalogUploadError[];
  errorCounts: Partial<Record<CatalogErrorType, number>>;
  /** Lines holding a product (blank lines aside), read so far. */
  productsReceived: number;
  /** Products that passed every check so far (and, unless validateOnly, are saved with the upload). */
  productsProcessed: number;
  createdAt: number;
  lastUpdated: number;
  expiresAt: number;
  uploadUrl: string;
  objectKey: string;
  receivedAt?: number;
  fileBytes?: number;
  /** True from the file's arrival until processing ends: uploads of a company are processed one at a time, in arrival order. */
  queued?: boolean | null;
  /** The processing run that owns the upload (job id and attempt); a run that lost it stops. */
  claim?: string | null;
  /** The catalog version this upload writes. */
  version?: number;
}

/** A company's committed catalog version. */
export interface CatalogHead extends Doc {
  companyId: string;
  version: number;
  updatedAt: number;
}

/** A product, with its variants, as stored by one catalog version. */
export interface ProductRow extends Doc {
  companyId: string;
  productId: string;
  version: number;
  /** Line of the upload that wrote it (for duplicate-id messages). */
  line: number;
  /**
   * Most often written as the line itself (a line with no unknown field is
   * the product), as JsonText: a save does not serialise it again.
   */
  product: CatalogProduct;
}

/**
 * Which product a variant belongs to: finds a variant by id, and a variant id
 * used twice. One row per variant id, written when a variant first appears
 * (or moves); it is a hint, always checked against the product's current row,
 * so a hint left by an upload that never committed misleads nobody. The
 * company and the variant are in the id (see variantHintId), so the row holds
 * nothing else: a first save writes about 2.4 hints per product. Rows of
 * older versions also hold companyId and variantId; readers ignore them.
 */
export interface VariantHint extends Doc {
  productId: string;
}

/** A journey event computed by a save, emitted once the save is committed. */
export interface PendingEventRow extends Doc {
  uploadId: string;
  companyId: string;
  name: string;
  payload: unknown;
}

/** What the variant history follows: the lowest price in each currency, the stock, whether it can be bought. */
export interface VariantState {
  prices: Record<string, { amount: string; compareAtPrice?: string }>;
  inventoryQuantity?: number;
  availableForPurchase: boolean;
}

/**
 * A save that changed a variant's price, stock or availability: the state
 * before and after. Written with the save's version (its id starts with the
 * company and the version, like a product row's), so readers see it once the
 * version commits, and a save that never commits leaves none behind.
 */
export interface VariantChangeRow extends Doc {
  companyId: string;
  variantId: string;
  productId: string;
  version: number;
  uploadId: string;
  at: number;
  before: VariantState;
  after: VariantState;
}

export const UPLOADS = "catalog_uploads";
export const HEADS = "catalog_heads";
export const PRODUCTS = "catalog_products";
export const VARIANTS = "catalog_variants";
export const PENDING_EVENTS = "catalog_pending_events";
export const VARIANT_HISTORY = "catalog_variant_history";

export const catalogCollections: readonly CollectionSpec[] = [
  { name: UPLOADS, indexes: [{ fields: ["companyId"] }, { fields: ["companyId", "queued", "receivedAt"] }] },
  { name: HEADS },
  { name: PRODUCTS, indexes: [{ fields: ["companyId", "productId", "version"], unique: true }], largeDocuments: true },
  { name: VARIANTS },
  { name: PENDING_EVENTS },
  { name: VARIANT_HISTORY, indexes: [{ fields: ["companyId", "variantId", "version"] }] },
];

/**
 * Row ids start with the company and the zero-padded version, so the rows of
 * one version are one id range: deleting a version needs no extra index.
 */
export function rowId(companyId: string, version: number, key: string): string {
  return `${versionPrefix(companyId, version)}${key}`;
}

export function versionPrefix(companyId: string, version: number): string {
  return `${companyId}:${String(version).padStart(10, "0")}:`;
}

/** Every id starting with `prefix`, as a range of the where-language. */
export function prefixRange(prefix: string): { gte: string; lt: string } {
  return { gte: prefix, lt: `${prefix.slice(0, -1)}${String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1)}` };
}

export function variantHintId(companyId: string, variantId: string): string {
  return `${companyId}:${variantId}`;
}

export function pendingEventId(uploadId: string, sequence: number): string {
  return `${uploadId}:${String(sequence).padStart(10, "0")}`;
}
