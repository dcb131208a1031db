import { CLOCK, inject, injectable, STORAGE, type Clock, type Collection, type Storage } from "../../src/index.ts";
import type { CatalogProduct, CatalogVariant } from "./product-schema.ts";
import {
  HEADS,
  PENDING_EVENTS,
  prefixRange,
  PRODUCTS,
  VARIANT_HISTORY,
  VARIANTS,
  variantHintId,
  versionPrefix,
  type CatalogHead,
  type PendingEventRow,
  type ProductRow,
  type VariantChangeRow,
  type VariantHint,
} from "./records.ts";

/** Ids per `in` query: well under SQLite's parameter limit, whatever the batch holds. */
const IDS_PER_QUERY = 500;

/** A variant and the product it belongs to. */
export interface CatalogVariantRecord {
  productId: string;
  variant: CatalogVariant;
}

/** A product as one catalog version stored it. */
export interface StoredProduct {
  /** Line of the upload that wrote it. */
  line: number;
  product: CatalogProduct;
}

/** The versions of one product found in storage. */
export interface ProductVersions {
  /** The newest committed one. */
  committed?: StoredProduct;
  /** The one the upload being processed wrote. */
  current?: StoredProduct;
  /** Ids of committed rows older than `committed`: nobody reads them any more. */
  stale: string[];
}

/**
 * The versioned catalog rows (see records.ts): what readers see (the newest
 * row at or below the company's head), and the bulk reads and deletes that
 * processing needs.
 */
@injectable()
export class CatalogStore {
  readonly products: Collection<ProductRow>;
  readonly variantHints: Collection<VariantHint>;
  readonly pendingEvents: Collection<PendingEventRow>;
  readonly variantHistory: Collection<VariantChangeRow>;
  readonly #heads: Collection<CatalogHead>;

  constructor(
    @inject(STORAGE) storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
  ) {
    this.products = storage.collection(PRODUCTS);
    this.variantHints = storage.collection(VARIANTS);
    this.pendingEvents = storage.collection(PENDING_EVENTS);
    this.variantHistory = storage.collection(VARIANT_HISTORY);
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
    const row = await this.#committedProduct(companyId, productId, await this.headVersion(companyId));
    return row?.product;
  }

  /** A variant of the catalog: its hint names the product, whose current row must still have it. */
  async getVariant(companyId: string, variantId: string): Promise<CatalogVariantRecord | undefined> {
    const hint = await this.variantHints.get(variantHintId(companyId, variantId));
    if (!hint) return undefined;
    const row = await this.#committedProduct(companyId, hint.productId, await this.headVersion(companyId));
    const variant = row?.product.variants.find((candidate) => candidate.id === variantId);
    return variant && { productId: hint.productId, variant };
  }

  #committedProduct(companyId: string, productId: string, head: number): Promise<ProductRow | undefined> {
    return this.products.findOne({ companyId, productId, version: { lte: head } }, [{ field: "version", direction: "desc" }]);
  }

  /** The stored versions of these products, around `version` (the one being written). */
  async productVersions(companyId: string, productIds: readonly string[], version: number): Promise<Map<string, ProductVersions>> {
    const rows = await inChunks(productIds, (chunk) => this.products.find({ where: { companyId, productId: { in: chunk } } }));
    rows.sort((a, b) => b.version - a.version);
    const versions = new Map<string, ProductVersions>();
    for (const row of rows) {
      let entry = versions.get(row.productId);
      if (!entry) versions.set(row.productId, (entry = { stale: [] }));
      if (row.version === version) entry.current = stored(row);
      else if (row.version > version) continue; // a dead run's leftovers, about to be dropped
      else if (!entry.committed) entry.committed = stored(row);
      else entry.stale.push(row.id);
    }
    return versions;
  }

  /** The hints of these variants, by variant id. */
  async hints(companyId: string, variantIds: readonly string[]): Promise<Map<string, VariantHint>> {
    const ids = variantIds.map((id) => variantHintId(companyId, id));
    const rows = await inChunks(ids, (chunk) => this.variantHints.find({ where: { id: { in: chunk } } }));
    const prefix = variantHintId(companyId, "");
    return new Map(rows.map((hint) => [hint.id.slice(prefix.length), hint]));
  }

  /** Drops the rows of every version above `version`: writes of a run that did not commit. */
  async deleteVersionsAbove(companyId: string, version: number): Promise<number> {
    const above = { id: { gte: versionPrefix(companyId, version + 1), lt: `${companyId};` } };
    return (await this.products.deleteWhere(above)) + (await this.variantHistory.deleteWhere(above));
  }

  /** Drops one version's rows (a validate-only run, or a failed save). */
  async deleteVersion(companyId: string, version: number): Promise<number> {
    const rows = { id: prefixRange(versionPrefix(companyId, version)) };
    return (await this.products.deleteWhere(rows)) + (await this.variantHistory.deleteWhere(rows));
  }

  /**
   * A page of the catalog's products in id order, from after `after` (a product
   * id), those whose id starts with `prefix` when one is given: each product as
   * its committed version holds it. A product has at most two rows at or below
   * the head (its committed one and the one an older save left), so a page reads
   * at most twice its size.
   */
  async productPage(companyId: string, options: { prefix?: string; after?: string; limit: number }): Promise<{ items: CatalogProduct[]; next?: string }> {
    const head = await this.headVersion(companyId);
    const range: { gte?: string; gt?: string; lt?: string } = options.prefix ? prefixRange(options.prefix) : {};
    if (options.after !== undefined && (range.gte === undefined || options.after >= range.gte)) {
      delete range.gte;
      range.gt = options.after;
    }
    const rows = await this.products.find({
      where: { companyId, productId: range, version: { lte: head } },
      orderBy: [{ field: "productId" }, { field: "version", direction: "desc" }],
      limit: options.limit * 2 + 2,
    });
    const items: CatalogProduct[] = [];
    let last: string | undefined;
    for (const row of rows.items) {
      if (row.productId === last) continue;
      if (items.length === options.limit) return { items, next: last };
      items.push(row.product);
      last = row.productId;
    }
    return { items, ...(rows.nextCursor !== undefined && last !== undefined ? { next: last } : {}) };
  }

  /** The committed changes of a variant's price, stock and availability, newest first. */
  async variantChanges(companyId: string, variantId: string, limit: number): Promise<VariantChangeRow[]> {
    const head = await this.headVersion(companyId);
    const page = await this.variantHistory.find({ where: { companyId, variantId, version: { lte: head } }, orderBy: [{ field: "version", direction: "desc" }], limit });
    return page.items;
  }

  deletePendingEvents(uploadId: string): Promise<number> {
    return this.pendingEvents.deleteWhere({ id: prefixRange(`${uploadId}:`) });
  }
}

function stored(row: ProductRow): StoredProduct {
  return { line: row.line, product: row.product };
}

/**
 * Runs an `in` query per chunk of ids. Chunks are padded to one of a few
 * sizes with repeats of their first id: every distinct list length is a new
 * SQL text, and a SQLite adapter keeps hundreds of prepared statements.
 */
async function inChunks<R>(ids: readonly string[], query: (chunk: string[]) => Promise<{ items: R[] }>): Promise<R[]> {
  const rows: R[] = [];
  for (let start = 0; start < ids.length; start += IDS_PER_QUERY) {
    const chunk = ids.slice(start, start + IDS_PER_QUERY);
    const size = CHUNK_SIZES.find((candidate) => candidate >= chunk.length)!;
    while (chunk.length < size) chunk.push(chunk[0]!);
    rows.push(...(await query(chunk)).items);
  }
  return rows;
}

const CHUNK_SIZES = [1, 16, 256, IDS_PER_QUERY];
