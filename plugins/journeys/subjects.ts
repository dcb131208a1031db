import type { CatalogVariantEvent } from "../catalog/index.ts";
import type { ProductItem, ProfilesService } from "../profiles/index.ts";
import type { Subject } from "./records.ts";

/** Events of a person's timeline an abandonment send looks through for its product. */
const TIMELINE_LOOKBACK = 100;

/** `$12.50`, `€9.00`: an amount in its currency, as people read it in a text. */
export function formatPrice(amount: number, currency: string): string | undefined {
  try {
    return new Intl.NumberFormat("en-US", { style: "currency", currency }).format(amount);
  } catch {
    return undefined;
  }
}

/** The product of a catalog event (back in stock, price drop, low inventory), with its lowest price. */
export function catalogSubject(event: CatalogVariantEvent): Subject {
  const prices = [...event.variant.prices].sort((a, b) => Number(a.amount) - Number(b.amount));
  const price = prices[0] && formatPrice(Number(prices[0].amount), prices[0].currencyCode);
  return {
    productId: event.productId,
    variantId: event.variantId,
    name: event.product.name,
    link: event.variant.link || event.product.link,
    ...(event.product.imageUrl !== undefined ? { imageUrl: event.product.imageUrl } : {}),
    ...(price !== undefined ? { price } : {}),
  };
}

/** The product of an ecommerce event's item. */
export function itemSubject(item: ProductItem): Subject {
  const first = item.price[0];
  const price = first && formatPrice(first.value, first.currency ?? "USD");
  return {
    productId: item.productId,
    variantId: item.productVariantId,
    ...(item.name !== undefined ? { name: item.name } : {}),
    ...(item.productUrl !== undefined ? { link: item.productUrl } : {}),
    ...(item.productImage !== undefined ? { imageUrl: item.productImage } : {}),
    ...(price !== undefined ? { price } : {}),
  };
}

/**
 * The product an abandonment message is about: the last one the person carted
 * (or viewed) among their newest events; "purchased" when a purchase came
 * after it, undefined when there is none.
 */
export async function abandonedProduct(profiles: ProfilesService, companyId: string, profileId: string, kind: "add_to_cart" | "product_view"): Promise<Subject | "purchased" | undefined> {
  const { events } = await profiles.events(companyId, profileId, { first: TIMELINE_LOOKBACK });
  for (const event of events) {
    if (event.kind === "purchase") return "purchased";
    const item = event.kind === kind ? event.items?.at(-1) : undefined;
    if (item) return itemSubject(item);
  }
  return undefined;
}
