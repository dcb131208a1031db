import { JsonText, type Migration, type Storage } from "../../src/index.ts";
import { PRODUCTS, type ProductRow } from "./records.ts";

/** A product row as stored before products were kept as values: their JSON text in `productJson`. */
interface TextProductRow extends Omit<ProductRow, "product"> {
  productJson?: string;
}

const ROWS_PER_PAGE = 1000;

/**
 * Rewrites the product rows of databases made before products were stored as
 * values, so that reads find `product` on every row. Each page's rows keep the
 * same text, now as the product itself.
 */
export const productRowsHoldProducts: Migration = {
  id: "product-rows-hold-products",
  up: ({ storage }) => rewriteTextProductRows(storage),
};

async function rewriteTextProductRows(storage: Storage): Promise<void> {
  const oldRows = storage.collection<TextProductRow>(PRODUCTS);
  const rows = storage.collection<ProductRow>(PRODUCTS);
  let after: string | undefined;
  do {
    const page = await oldRows.find({ where: { productJson: { exists: true } }, limit: ROWS_PER_PAGE, after });
    if (page.items.length === 0) return;
    await rows.upsertMany(
      page.items.map(({ productJson, ...row }) => ({ ...row, product: new JsonText(productJson!) })),
    );
    after = page.nextCursor;
  } while (after !== undefined);
}
