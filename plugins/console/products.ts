import { notFound, type AnyRoute } from "../../src/index.ts";
import type { CatalogApi, CatalogPrice, CatalogProduct, CatalogVariant, VariantChange, VariantState } from "../catalog/index.ts";
import { pageRoute, queryText, type ConsoleDeps } from "./console-routes.ts";
import { pageDocs, searchQuery } from "./docs.ts";
import { pager, searchForm, status, table, when } from "./format.ts";
import { html, type SafeHtml } from "./html.ts";

/** The product of the API reference's example upload. */
const EXAMPLE_PRODUCT_ID = "tee-1";
/** Changes shown per variant. */
export const HISTORY_SHOWN = 20;

const prices = (list: readonly CatalogPrice[]) =>
  list.map((price) => `${price.amount} ${price.currencyCode}${price.compareAtPrice ? ` (was ${price.compareAtPrice})` : ""}`).join(", ");
const stock = (variant: Pick<CatalogVariant, "inventoryQuantity" | "availableForPurchase">) =>
  `${variant.inventoryQuantity ?? "—"}${variant.availableForPurchase ? "" : " (not for sale)"}`;
const state = (point: VariantState) =>
  `${Object.entries(point.prices)
    .map(([currency, price]) => `${price.amount} ${currency}${price.compareAtPrice ? ` (was ${price.compareAtPrice})` : ""}`)
    .join(", ")} · stock ${stock(point)}`;

/** The catalog's products (search by product id beginning or a variant id), and a product with its variants' stock and price history. */
export function productRoutes(deps: ConsoleDeps, catalog: CatalogApi): AnyRoute[] {
  return [
    pageRoute(deps, {
      path: "/products",
      section: "products",
      summary: "Show the console's products",
      docs: pageDocs({
        operationId: "showConsoleProducts",
        description: "The catalog's products in id order, 50 a page, or those whose id starts with the search (a variant's exact id finds its product too).",
        query: searchQuery("The beginning of a product id, or a variant id"),
        example: { query: { q: "tee" }, after: ["postUpload", "putUploadFile"] },
      }),
      async render(viewer, context) {
        const companyId = viewer.company.id;
        const q = queryText(context, "q");
        const after = queryText(context, "after");
        const page = await catalog.listProducts(companyId, { search: q, after });
        const items = [...page.items];
        const byVariant = q && !after ? await catalog.getVariant(companyId, q) : undefined;
        if (byVariant && !items.some((item) => item.id === byVariant.productId)) {
          const owner = await catalog.getProduct(companyId, byVariant.productId);
          if (owner) items.unshift(owner);
        }
        const rows = items.map(
          (product) => html`<tr><td><a href="${viewer.base}/products/${encodeURIComponent(product.id)}"><code>${product.id}</code></a></td><td class="wrap">${product.name}</td>
<td class="num">${product.variants.length}</td><td class="num">${product.variants.filter((variant) => variant.availableForPurchase).length}</td><td>${product.lastUpdated}</td></tr>`,
        );
        const path = `${viewer.base}/products`;
        return {
          title: "Products",
          section: "products",
          body: html`<h1>Products</h1>
${searchForm(path, "Product id (its beginning) or variant id", q)}
${table("Products", ["Product", "Name", "Variants", "For sale", "Last updated"], rows, q ? "No product matches." : "No products yet: upload a catalog.")}
${pager(path, { q, after }, page.nextCursor)}`,
        };
      },
    }),
    pageRoute(deps, {
      path: "/products/:productId",
      section: "products",
      summary: "Show a product in the console",
      docs: pageDocs({
        operationId: "showConsoleProduct",
        description: "One product as the catalog holds it: each variant's prices, stock and availability, and how they changed, save by save.",
        params: { productId: "The product's id" },
        example: { params: { productId: EXAMPLE_PRODUCT_ID }, after: ["postUpload", "putUploadFile"] },
      }),
      async render(viewer, context) {
        const product = await catalog.getProduct(viewer.company.id, context.params.productId ?? "");
        if (!product) throw notFound();
        const histories = await Promise.all(product.variants.map((variant) => catalog.variantHistory(viewer.company.id, variant.id, { limit: HISTORY_SHOWN })));
        return { title: product.name, section: "products", body: productBody(viewer.base, product, histories) };
      },
    }),
  ];
}

function productBody(base: string, product: CatalogProduct, histories: readonly VariantChange[][]): SafeHtml {
  const variants = product.variants.map(
    (variant) => html`<tr><td><code>${variant.id}</code></td><td class="wrap">${variant.name}</td><td>${prices(variant.prices)}</td><td class="num">${stock(variant)}</td><td>${status(variant.availableForPurchase ? "for sale" : "not for sale")}</td></tr>`,
  );
  const history = product.variants.map(
    (variant, index) => html`<h3>${variant.name} <code>${variant.id}</code></h3>
${table(
  `History of ${variant.id}`,
  ["When", "Before", "After", "Upload"],
  histories[index]!.map((change) => html`<tr><td>${when(change.at)}</td><td>${state(change.before)}</td><td>${state(change.after)}</td><td><a href="${base}/catalog/uploads/${change.uploadId}"><code>${change.uploadId}</code></a></td></tr>`),
  "No change since it was first uploaded.",
)}`,
  );
  return html`<h1>${product.name}</h1>
<section class="card"><dl class="fields">
<dt>Id</dt><dd><code>${product.id}</code></dd>
${product.brand ? html`<dt>Brand</dt><dd>${product.brand}</dd>` : ""}
<dt>Link</dt><dd>${product.link}</dd>
<dt>Last updated</dt><dd>${product.lastUpdated}</dd>
</dl></section>
<h2>Variants</h2>
${table("Variants", ["Variant", "Name", "Prices", "Stock", "Availability"], variants, "No variants.")}
<h2>Stock and price history</h2>
<p class="muted">Each save that changed a variant's lowest price in a currency, its stock or its availability; the latest ${HISTORY_SHOWN} per variant.</p>
${history}
<p><a href="${base}/products">All products</a></p>`;
}
