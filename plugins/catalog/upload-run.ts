import type { Readable } from "node:stream";
import { JsonText, type Clock, type Collection, type Storage, type WithJsonText } from "../../src/index.ts";
import type { CatalogStore, ProductVersions, StoredProduct } from "./catalog-store.ts";
import { ErrorList } from "./error-list.ts";
import { IdFilter } from "./id-filter.ts";
import { journeyEvents, lowestPrices } from "./journey-events.ts";
import { checkLines, type CheckedLine } from "./check-lines.ts";
import { quote, type LineProblem } from "./line-check.ts";
import type { CatalogProduct, CatalogVariant } from "./product-schema.ts";
import {
  pendingEventId,
  rowId,
  variantHintId,
  type PendingEventRow,
  type ProductRow,
  type UploadRecord,
  type VariantChangeRow,
  type VariantHint,
  type VariantState,
} from "./records.ts";
import type { CatalogSettings } from "./settings.ts";

/** Another run took the upload over (this one was presumed dead): stop without touching anything. */
export class LostClaimError extends Error {
  constructor(uploadId: string) {
    super(`upload ${uploadId} is being processed by another run`);
    this.name = "LostClaimError";
  }
}

/** How a run ended: its file read to the end, stopped by the kit, or given up as holding no product. */
export type RunEnd = "read" | "stopped" | "no products";

function stop(file: Readable): RunEnd {
  file.destroy();
  return "stopped";
}

/** Ids accepted earlier in the batch being screened, with their lines. */
interface SeenInBatch {
  products: Map<string, number>;
  variants: Map<string, number>;
}

/**
 * A product line that passed its checks, as a batch holds it until it is
 * screened: its ids, and its text when the line is the product as is. The
 * parsed product is kept only when it is needed: to write a product whose
 * line had unknown fields, and for journey events once the catalog holds
 * committed products. A first save holds no parsed product: a batch of them
 * outlived young-generation collections, which copied each one (garbage
 * collection was about a seventh of a first save's CPU in perf).
 */
type CheckedProduct = { lineNum: number; id: string; variantIds: string[] } & ({ json: string; product?: CatalogProduct } | { json?: undefined; product: CatalogProduct });

/** What a batch writes once it is screened against the rows already stored. */
interface BatchWrites {
  products: WithJsonText<ProductRow>[];
  hints: VariantHint[];
  staleProductIds: string[];
  events: PendingEventRow[];
  changes: VariantChangeRow[];
}

/**
 * One pass over an upload's file: every line is checked, the products that
 * pass are written as rows of the upload's catalog version in batches (one
 * transaction each, with the progress counters), and the journey events of
 * the save are kept aside until it commits. Memory holds one batch, whatever
 * the size of the file.
 */
export class UploadRun {
  readonly #errors: ErrorList;
  #batch: CheckedProduct[] = [];
  #batchVariants = 0;
  #linesSinceFlush = 0;
  #productSeen = false;
  #received = 0;
  #processed = 0;
  #eventSequence = 0;
  /**
   * Into an empty catalog (the first save), only ids of lines this run
   * screened in earlier batches can be found in storage: these filters, which
   * hold every id screened so far, let a batch skip the reads that cannot
   * find anything. Undefined when the catalog holds committed products.
   */
  readonly #screened?: { products: IdFilter; variants: IdFilter };

  constructor(
    private readonly upload: UploadRecord,
    private readonly claim: string,
    private readonly version: number,
    private readonly store: CatalogStore,
    private readonly uploads: Collection<UploadRecord>,
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly settings: CatalogSettings,
  ) {
    this.#errors = new ErrorList(settings.errorsPerType);
    // The version a run writes is the committed head's plus one.
    if (version === 1) this.#screened = { products: new IdFilter(), variants: new IdFilter() };
  }

  /** Reads the file: to its end, until `signal` stops it, or until it has shown that it holds no product (see settings). */
  async run(file: Readable, signal: AbortSignal): Promise<RunEnd> {
    const { batchSize, maxLinesWithoutProduct } = this.settings;
    for await (const lines of checkLines(file, this.settings)) {
      for (const line of lines) {
        // Blank lines change no counter, so they never call for a write.
        if (line.kind !== "blank") this.#take(line);
        const lastLine = line.kind === "blank" ? line.lineNum + line.count - 1 : line.lineNum;
        if (!this.#productSeen && lastLine >= maxLinesWithoutProduct) return this.#endWithoutProducts(file);
        // Flush on products, on variants (100-variant products), and now and then for progress on a bad file.
        if (this.#batch.length >= batchSize || this.#batchVariants >= 4 * batchSize || this.#linesSinceFlush >= 10 * batchSize) {
          await this.#flush();
          if (signal.aborted) return stop(file);
        }
      }
      if (signal.aborted) return stop(file);
    }
    await this.#flush();
    return "read";
  }

  #take(line: Exclude<CheckedLine, { kind: "blank" }>): void {
    this.#received++;
    this.#linesSinceFlush++;
    if (line.kind === "problems") this.#errors.add(line.lineNum, line.problems);
    else {
      this.#productSeen = true;
      const { lineNum, product, json } = line;
      const variantIds = product.variants.map((variant) => variant.id);
      if (json === undefined) this.#batch.push({ lineNum, id: product.id, variantIds, product });
      // Into an empty catalog (#screened), no journey event can need the product.
      else this.#batch.push({ lineNum, id: product.id, variantIds, json, product: this.#screened ? undefined : product });
      this.#batchVariants += variantIds.length;
    }
  }

  /** The first maxLinesWithoutProduct lines held no product: the file ends there, with an error that says so. */
  async #endWithoutProducts(file: Readable): Promise<RunEnd> {
    const lines = this.settings.maxLinesWithoutProduct;
    this.#errors.add(lines, [
      {
        errorType: "NO_PRODUCTS",
        errorMessage: `the first ${lines} lines hold no product (each one is blank or has errors): reading stopped at line ${lines}, and nothing from this upload was saved`,
      },
    ]);
    await this.#flush();
    file.destroy();
    return "no products";
  }

  async #flush(): Promise<void> {
    const batch = this.#batch;
    this.#batch = [];
    this.#batchVariants = 0;
    this.#linesSinceFlush = 0;
    const writes = await this.#screen(batch);
    const { products, variantHints } = this.store;
    await this.storage.transaction(async () => {
      if (writes.products.length > 0) await products.upsertMany(writes.products);
      if (writes.hints.length > 0) await variantHints.upsertMany(writes.hints);
      if (writes.staleProductIds.length > 0) await products.deleteWhere({ id: { in: writes.staleProductIds } });
      if (writes.events.length > 0) await this.store.pendingEvents.upsertMany(writes.events);
      if (writes.changes.length > 0) await this.store.variantHistory.upsertMany(writes.changes);
      const progress = {
        productsReceived: this.#received,
        productsProcessed: this.#processed,
        errors: this.#errors.entries(),
        errorCounts: this.#errors.counts(),
        lastUpdated: this.clock.now(),
      };
      if (!(await this.uploads.update(this.upload.id, progress, { where: { claim: this.claim } }))) throw new LostClaimError(this.upload.id);
    });
  }

  /**
   * Checks a batch against what is stored: ids already used earlier in this
   * upload, variant ids that belong to another product of the catalog.
   * Products that pass become rows; the previous version of each product
   * gives its variants' journey events; older committed versions are dropped
   * (the newest stays until this version commits).
   */
  async #screen(batch: readonly CheckedProduct[]): Promise<BatchWrites> {
    const writes: BatchWrites = { products: [], hints: [], staleProductIds: [], events: [], changes: [] };
    if (batch.length === 0) return writes;
    const { companyId, validateOnly } = this.upload;
    const { versions, hints } = await this.#stored(batch);
    if (!validateOnly) for (const entry of versions.values()) writes.staleProductIds.push(...entry.stale);
    const seen: SeenInBatch = { products: new Map(), variants: new Map() };
    for (const checked of batch) {
      const { lineNum, id, variantIds } = checked;
      const earlier = versions.get(id)?.current?.line ?? seen.products.get(id);
      const hintsBefore = writes.hints.length;
      const problems: LineProblem[] = [];
      // A repeated product repeats its variants too: one entry says it all.
      if (earlier !== undefined) problems.push({ errorType: "DUPLICATE_ID", errorMessage: `id ${quote(id)} is already used by the product on line ${earlier}` });
      else {
        variantIds.forEach((variantId, index) => {
          const problem = this.#variantProblem(id, variantId, index, hints, versions, seen);
          if (problem === "new hint") writes.hints.push({ id: variantHintId(companyId, variantId), productId: id });
          else if (problem) problems.push(problem);
        });
      }
      if (problems.length > 0) {
        writes.hints.length = hintsBefore;
        this.#errors.add(lineNum, problems);
        continue;
      }
      this.#processed++;
      seen.products.set(id, lineNum);
      for (const variantId of variantIds) seen.variants.set(variantId, lineNum);
      writes.products.push({
        id: rowId(companyId, this.version, id),
        companyId,
        productId: id,
        version: this.version,
        line: lineNum,
        product: checked.json === undefined ? checked.product : new JsonText(checked.json),
      });
      // The product is kept whenever the catalog holds committed products (see CheckedProduct).
      if (!validateOnly && checked.product) this.#changes(checked.product, versions.get(id), writes);
    }
    return writes;
  }

  /**
   * The stored versions of the batch's products, and of the products its
   * variants' hints name. Into an empty catalog, an id no earlier batch of
   * this run screened is in no row it must see: a hint naming a product it
   * did not write is stale, and is written again (the same hint, if it named
   * this one). The batch's ids join the filters here, each hashed once: a
   * screened id that was refused then costs a later line a read, never an answer.
   */
  async #stored(batch: readonly CheckedProduct[]) {
    const { companyId } = this.upload;
    const screened = this.#screened;
    const productIds = new Set<string>();
    const variantIds = new Set<string>();
    for (const { id, variantIds: ofProduct } of batch) {
      if (!screened || screened.products.add(id)) productIds.add(id);
      for (const variantId of ofProduct) if (!screened || screened.variants.add(variantId)) variantIds.add(variantId);
    }
    const [versions, hints] = await Promise.all([this.store.productVersions(companyId, [...productIds], this.version), this.store.hints(companyId, [...variantIds])]);
    const elsewhere = [...new Set([...hints.values()].map((hint) => hint.productId))].filter((id) => !productIds.has(id));
    for (const [id, entry] of await this.store.productVersions(companyId, elsewhere, this.version)) versions.set(id, entry);
    return { versions, hints };
  }

  /**
   * Whether a variant id is free for this product: a DUPLICATE_ID problem
   * when an earlier line of the upload has it, or another product has it in
   * the catalog; "new hint" when its hint must (re)name this product.
   */
  #variantProblem(
    productId: string,
    variantId: string,
    index: number,
    hints: ReadonlyMap<string, VariantHint>,
    versions: ReadonlyMap<string, ProductVersions>,
    seen: SeenInBatch,
  ): LineProblem | "new hint" | undefined {
    const hinted = hints.get(variantId)?.productId;
    const other = hinted !== undefined && hinted !== productId ? versions.get(hinted) : undefined;
    const usedOnLine = seen.variants.get(variantId) ?? (other?.current && has(other.current, variantId) ? other.current.line : undefined);
    if (usedOnLine !== undefined) return { errorType: "DUPLICATE_ID", errorMessage: `${variantField(index, variantId)} is already used by a variant on line ${usedOnLine}` };
    if (other?.committed && has(other.committed, variantId)) {
      return { errorType: "DUPLICATE_ID", errorMessage: `${variantField(index, variantId)} belongs to product ${quote(other.committed.product.id)} in the catalog` };
    }
    // New, or its hint is stale (the product it names no longer has it).
    return hinted === productId ? undefined : "new hint";
  }

  /** What saving a product over its committed version changes: its variants' journey events, and their history. */
  #changes(product: CatalogProduct, versions: ProductVersions | undefined, writes: BatchWrites): void {
    const previous = versions?.committed?.product.variants;
    if (!previous) return;
    const { companyId, id: uploadId } = this.upload;
    const now = this.clock.now();
    for (const variant of product.variants) {
      const before = previous.find((candidate) => candidate.id === variant.id);
      for (const event of journeyEvents({ companyId, uploadId, product }, before, variant, this.settings.lowInventoryThreshold)) {
        writes.events.push({ id: pendingEventId(uploadId, ++this.#eventSequence), uploadId, companyId, name: event.name, payload: event.payload });
      }
      if (!before || !mayDiffer(before, variant)) continue;
      const [was, is] = [variantState(before), variantState(variant)];
      if (JSON.stringify(was) === JSON.stringify(is)) continue;
      const change = { companyId, variantId: variant.id, productId: product.id, version: this.version, uploadId, at: now, before: was, after: is };
      writes.changes.push({ id: rowId(companyId, this.version, variant.id), ...change });
    }
  }
}

/** A cheap first look (most saved variants are unchanged): false when the history's fields are surely the same. */
function mayDiffer(before: CatalogVariant, after: CatalogVariant): boolean {
  if (before.availableForPurchase !== after.availableForPurchase || before.inventoryQuantity !== after.inventoryQuantity) return true;
  if (before.prices.length !== after.prices.length) return true;
  return before.prices.some((price, index) => {
    const other = after.prices[index]!;
    return price.amount !== other.amount || price.currencyCode !== other.currencyCode || price.compareAtPrice !== other.compareAtPrice;
  });
}

/** The lowest price per currency (in currency order), the stock and the availability of a variant. */
function variantState(variant: CatalogVariant): VariantState {
  const prices = Object.fromEntries([...lowestPrices(variant.prices)].sort(([a], [b]) => a.localeCompare(b)));
  return { prices, ...(variant.inventoryQuantity !== undefined ? { inventoryQuantity: variant.inventoryQuantity } : {}), availableForPurchase: variant.availableForPurchase };
}

function variantField(index: number, variantId: string): string {
  return `variants[${index}].id ${quote(variantId)}`;
}

function has(stored: StoredProduct, variantId: string): boolean {
  return stored.product.variants.some((variant) => variant.id === variantId);
}
