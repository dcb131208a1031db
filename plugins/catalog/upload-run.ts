import type { Readable } from "node:stream";
import type { Clock } from "../../src/ports/clock.ts";
import type { Collection, Storage } from "../../src/ports/storage.ts";
import { newestById, type CatalogStore } from "./catalog-store.ts";
import { ErrorList } from "./error-list.ts";
import { journeyEvents } from "./journey-events.ts";
import { LineChecker, quote, type LineProblem } from "./line-check.ts";
import type { CatalogProduct } from "./product-schema.ts";
import { readLines } from "./read-lines.ts";
import { pendingEventId, rowId, type PendingEventRow, type ProductRow, type UploadRecord, type VariantRow } from "./records.ts";
import type { CatalogSettings } from "./settings.ts";

/** Another run took the upload over (this one was presumed dead): stop without touching anything. */
export class LostClaimError extends Error {
  constructor(uploadId: string) {
    super(`upload ${uploadId} is being processed by another run`);
    this.name = "LostClaimError";
  }
}

interface CheckedProduct {
  lineNum: number;
  product: CatalogProduct;
}

/** What a batch writes once it is screened against the rows already stored. */
interface BatchWrites {
  products: ProductRow[];
  variants: VariantRow[];
  staleProductIds: string[];
  staleVariantIds: string[];
  events: PendingEventRow[];
}

/**
 * One pass over an upload's file: every line is checked, the products that
 * pass are written as rows of the upload's catalog version in batches (one
 * transaction each, with the progress counters), and the journey events of
 * the save are kept aside until it commits. Memory holds one batch, whatever
 * the size of the file.
 */
export class UploadRun {
  readonly #checker = new LineChecker();
  readonly #errors: ErrorList;
  #batch: CheckedProduct[] = [];
  #batchVariants = 0;
  #linesSinceFlush = 0;
  #received = 0;
  #processed = 0;
  #eventSequence = 0;

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
  }

  /** Reads the whole file; false when `signal` stopped it first. */
  async run(file: Readable, signal: AbortSignal): Promise<boolean> {
    const { batchSize, maxLineBytes } = this.settings;
    for await (const lines of readLines(file, maxLineBytes)) {
      for (const line of lines) {
        if (line.tooLong !== undefined) {
          this.#received++;
          this.#errors.add(line.lineNum, [
            { errorType: "LINE_TOO_LONG", errorMessage: `the line is ${line.tooLong} bytes long; at most ${maxLineBytes} are allowed` },
          ]);
          continue;
        }
        const outcome = this.#checker.check(line.bytes);
        if (outcome.kind === "blank") continue;
        this.#received++;
        if (outcome.kind === "problems") {
          this.#errors.add(line.lineNum, outcome.problems);
        } else {
          this.#batch.push({ lineNum: line.lineNum, product: outcome.product });
          this.#batchVariants += outcome.product.variants.length;
        }
      }
      this.#linesSinceFlush += lines.length;
      // Flush on products, on variants (a batch of 100-variant products), and now and then for progress on a bad file.
      if (this.#batch.length >= batchSize || this.#batchVariants >= 4 * batchSize || this.#linesSinceFlush >= 10 * batchSize) {
        await this.#flush();
      }
      if (signal.aborted) {
        file.destroy();
        return false;
      }
    }
    await this.#flush();
    return true;
  }

  async #flush(): Promise<void> {
    const batch = this.#batch;
    this.#batch = [];
    this.#batchVariants = 0;
    this.#linesSinceFlush = 0;
    const writes = await this.#screen(batch);
    const { products, variants } = this.store;
    await this.storage.transaction(async () => {
      if (writes.products.length > 0) await products.upsertMany(writes.products);
      if (writes.variants.length > 0) await variants.upsertMany(writes.variants);
      if (writes.staleProductIds.length > 0) await products.deleteWhere({ id: { in: writes.staleProductIds } });
      if (writes.staleVariantIds.length > 0) await variants.deleteWhere({ id: { in: writes.staleVariantIds } });
      if (writes.events.length > 0) await this.store.pendingEvents.upsertMany(writes.events);
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
   * upload, variant ids owned by another product of the catalog. Products
   * that pass become rows; their variants' previous versions give the
   * journey events; older committed versions of the same ids are dropped.
   */
  async #screen(batch: readonly CheckedProduct[]): Promise<BatchWrites> {
    const writes: BatchWrites = { products: [], variants: [], staleProductIds: [], staleVariantIds: [], events: [] };
    if (batch.length === 0) return writes;
    const { companyId, id: uploadId, validateOnly } = this.upload;
    const version = this.version;
    const productIds = [...new Set(batch.map((item) => item.product.id))];
    const variantIds = [...new Set(batch.flatMap((item) => item.product.variants.map((variant) => variant.id)))];
    const [productRows, variantRows] = await Promise.all([this.store.productRows(companyId, productIds), this.store.variantRows(companyId, variantIds)]);

    const productLines = new Map<string, number>();
    const variantLines = new Map<string, number>();
    for (const row of productRows) if (row.version === version) productLines.set(row.productId, row.line);
    for (const row of variantRows) if (row.version === version) variantLines.set(row.variantId, row.line);
    const committedProducts = newestById(productRows.filter((row) => row.version < version), (row) => row.productId);
    const committedVariants = newestById(variantRows.filter((row) => row.version < version), (row) => row.variantId);
    if (!validateOnly) {
      for (const row of productRows) if (row.version < version && committedProducts.get(row.productId) !== row) writes.staleProductIds.push(row.id);
      for (const row of variantRows) if (row.version < version && committedVariants.get(row.variantId) !== row) writes.staleVariantIds.push(row.id);
    }

    for (const { lineNum, product } of batch) {
      const problems: LineProblem[] = [];
      const productLine = productLines.get(product.id);
      if (productLine !== undefined) {
        problems.push({ errorType: "DUPLICATE_ID", errorMessage: `id ${quote(product.id)} is already used by the product on line ${productLine}` });
      }
      product.variants.forEach((variant, index) => {
        const variantLine = variantLines.get(variant.id);
        const owner = committedVariants.get(variant.id)?.productId;
        if (variantLine !== undefined) {
          problems.push({ errorType: "DUPLICATE_ID", errorMessage: `variants[${index}].id ${quote(variant.id)} is already used by a variant on line ${variantLine}` });
        } else if (owner !== undefined && owner !== product.id) {
          problems.push({ errorType: "DUPLICATE_ID", errorMessage: `variants[${index}].id ${quote(variant.id)} belongs to product ${quote(owner)} in the catalog` });
        }
      });
      if (problems.length > 0) {
        this.#errors.add(lineNum, problems);
        continue;
      }
      this.#processed++;
      productLines.set(product.id, lineNum);
      const { variants, ...fields } = product;
      writes.products.push({
        id: rowId(companyId, version, product.id),
        companyId,
        productId: product.id,
        version,
        uploadId,
        line: lineNum,
        product: { ...fields, variantIds: variants.map((variant) => variant.id) },
      });
      for (const variant of variants) {
        variantLines.set(variant.id, lineNum);
        writes.variants.push({ id: rowId(companyId, version, variant.id), companyId, variantId: variant.id, productId: product.id, version, uploadId, line: lineNum, variant });
        if (validateOnly) continue;
        const before = committedVariants.get(variant.id)?.variant;
        for (const event of journeyEvents({ companyId, uploadId, product }, before, variant, this.settings.lowInventoryThreshold)) {
          writes.events.push({ id: pendingEventId(uploadId, ++this.#eventSequence), uploadId, companyId, name: event.name, payload: event.payload });
        }
      }
    }
    return writes;
  }
}
