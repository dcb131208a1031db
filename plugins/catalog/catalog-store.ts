import type { Clock } from "../../src/ports/clock.ts";
import type { Collection, Storage } from "../../src/ports/storage.ts";
import type { CatalogProduct, CatalogVariant } from "./product-schema.ts";
import {
  HEADS,
  PENDING_EVENTS,
  prefixRange,
  PRODUCTS,
  VARIANTS,
  versionPrefix,
  type CatalogHead,
  type PendingEventRow,
  type ProductRow,
  type VariantRow,
} from "./records.ts";

/** Ids per `in` query: well under SQLite's parameter limit, whatever the batch holds. */
const IDS_PER_QUERY = 500;

/** A variant and the product it belongs to. */
export interface CatalogVariantRecord {
  productId: string;
  variant: CatalogVariant;
}

/**
 * The versioned catalog rows (see records.ts): what readers see (the newest
 * row at or below the company's head), and the bulk reads and deletes that
 * processing needs.
 */
export class CatalogStore {
  readonly products: Collection<ProductRow>;
  readonly variants: Collection<VariantRow>;
  readonly pendingEvents: Collection<PendingEventRow>;
  readonly #heads: Collection<CatalogHead>;

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {
    this.products = storage.collection(PRODUCTS);
    this.variants = storage.collection(VARIANTS);
    this.pendingEvents = storage.collection(PENDING_EVENTS);
    this.#heads = storage.collection(HEADS);
  }

  /** The committed catalog version of a company (0 before its first save). */
  async headVersion(companyId: string): Promise<number> {
    return (await this.#heads.get(companyId))?.version ?? 0;
  }

  /** Makes `version` the company's catalog. Call inside the transaction that completes the upload. */
  async commit(companyId: string, version: number): Promise<void> {
    await this.#heads.upsert({ id: companyId, companyId, version, updatedAt: this.clock.now() });
  }

  async getProduct(companyId: string, productId: string): Promise<CatalogProduct | undefined> {
    const head = await this.headVersion(companyId);
    const row = await this.products.findOne({ companyId, productId, version: { lte: head } }, [{ field: "version", direction: "desc" }]);
    if (!row) return undefined;
    const variantRows = (await this.variants.find({ where: { companyId, productId, version: { lte: head } } })).items;
    const variants = [...newestById(variantRows, (variant) => variant.variantId).values()].map((variant) => variant.variant);
    variants.sort((a, b) => (a.position ?? Infinity) - (b.position ?? Infinity) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const { variantIds: _listedOnItsLine, ...product } = row.product;
    return { ...product, variants };
  }

  async getVariant(companyId: string, variantId: string): Promise<CatalogVariantRecord | undefined> {
    const head = await this.headVersion(companyId);
    const row = await this.variants.findOne({ companyId, variantId, version: { lte: head } }, [{ field: "version", direction: "desc" }]);
    return row ? { productId: row.productId, variant: row.variant } : undefined;
  }

  /** Every stored version of these products (committed or being written). */
  productRows(companyId: string, productIds: readonly string[]): Promise<ProductRow[]> {
    return inChunks(productIds, (productId) => this.products.find({ where: { companyId, productId: { in: productId } } }));
  }

  /** Every stored version of these variants (committed or being written). */
  variantRows(companyId: string, variantIds: readonly string[]): Promise<VariantRow[]> {
    return inChunks(variantIds, (variantId) => this.variants.find({ where: { companyId, variantId: { in: variantId } } }));
  }

  /** Drops the rows of every version above `version`: writes of a run that did not commit. */
  async deleteVersionsAbove(companyId: string, version: number): Promise<void> {
    const range = { gte: versionPrefix(companyId, version + 1), lt: `${companyId};` };
    await this.storage.transaction(async () => {
      await this.products.deleteWhere({ id: range });
      await this.variants.deleteWhere({ id: range });
    });
  }

  /** Drops one version's rows (a validate-only run, or a failed save). */
  async deleteVersion(companyId: string, version: number): Promise<void> {
    const range = prefixRange(versionPrefix(companyId, version));
    await this.storage.transaction(async () => {
      await this.products.deleteWhere({ id: range });
      await this.variants.deleteWhere({ id: range });
    });
  }

  deletePendingEvents(uploadId: string): Promise<number> {
    return this.pendingEvents.deleteWhere({ id: prefixRange(`${uploadId}:`) });
  }
}

/** The newest version of each id among `rows`. */
export function newestById<R extends { version: number }>(rows: readonly R[], idOf: (row: R) => string): Map<string, R> {
  const newest = new Map<string, R>();
  for (const row of rows) {
    const id = idOf(row);
    const known = newest.get(id);
    if (!known || row.version > known.version) newest.set(id, row);
  }
  return newest;
}

async function inChunks<R>(ids: readonly string[], query: (chunk: string[]) => Promise<{ items: R[] }>): Promise<R[]> {
  const rows: R[] = [];
  for (let start = 0; start < ids.length; start += IDS_PER_QUERY) {
    rows.push(...(await query(ids.slice(start, start + IDS_PER_QUERY))).items);
  }
  return rows;
}
