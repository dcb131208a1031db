import { compareDecimals } from "./decimal.ts";
import type { CatalogPrice, CatalogProduct, CatalogVariant } from "./product-schema.ts";

/** What a journey event says about the product, enough to write a message. */
export interface ProductSummary {
  id: string;
  name: string;
  link: string;
  /** The image of the variant, else the product's default image. */
  imageUrl?: string;
}

/** What every catalog journey event carries. */
export interface CatalogVariantEvent {
  companyId: string;
  /** The upload whose save caused the event. */
  uploadId: string;
  productId: string;
  variantId: string;
  product: ProductSummary;
  /** The variant as saved. */
  variant: CatalogVariant;
}

/** availableForPurchase went from false to true. */
export interface BackInStockEvent extends CatalogVariantEvent {
  before: { availableForPurchase: false };
  after: { availableForPurchase: true };
}

/** inventoryQuantity fell from above the threshold to or below it. */
export interface LowInventoryEvent extends CatalogVariantEvent {
  threshold: number;
  before: { inventoryQuantity: number };
  after: { inventoryQuantity: number };
}

/** The lowest price of a variant in one currency, and its compare-at price. */
export interface PricePoint {
  amount: string;
  compareAtPrice?: string;
}

/** The lowest price in a currency decreased, or a compare-at price was newly set on it (on sale). */
export interface PriceDroppedEvent extends CatalogVariantEvent {
  currencyCode: string;
  before: PricePoint;
  after: PricePoint;
}

declare module "../../src/events/event-bus.ts" {
  interface ReachkitEvents {
    "catalog.variant.back_in_stock": BackInStockEvent;
    "catalog.variant.low_inventory": LowInventoryEvent;
    "catalog.variant.price_dropped": PriceDroppedEvent;
  }
}

export const JOURNEY_EVENTS = ["catalog.variant.back_in_stock", "catalog.variant.low_inventory", "catalog.variant.price_dropped"] as const;
export type JourneyEventName = (typeof JOURNEY_EVENTS)[number];

export type JourneyEvent =
  | { name: "catalog.variant.back_in_stock"; payload: BackInStockEvent }
  | { name: "catalog.variant.low_inventory"; payload: LowInventoryEvent }
  | { name: "catalog.variant.price_dropped"; payload: PriceDroppedEvent };

/**
 * The journey events of one variant saved over its previous version. A
 * variant seen for the first time has no previous version, hence no event;
 * saving the same values again changes nothing, hence no event either.
 */
export function journeyEvents(
  source: { companyId: string; uploadId: string; product: CatalogProduct },
  before: CatalogVariant | undefined,
  after: CatalogVariant,
  lowInventoryThreshold: number,
): JourneyEvent[] {
  if (!before) return [];
  // Built only when an event fires: most saved variants cause none.
  let shared: CatalogVariantEvent | undefined;
  const events: JourneyEvent[] = [];
  // Availability alone decides: inventory coming back never counts as back in stock.
  if (!before.availableForPurchase && after.availableForPurchase) {
    events.push({
      name: "catalog.variant.back_in_stock",
      payload: { ...(shared ??= variantEvent(source, after)), before: { availableForPurchase: false }, after: { availableForPurchase: true } },
    });
  }
  const was = before.inventoryQuantity;
  const now = after.inventoryQuantity;
  if (was !== undefined && now !== undefined && was > lowInventoryThreshold && now <= lowInventoryThreshold) {
    events.push({
      name: "catalog.variant.low_inventory",
      payload: { ...(shared ??= variantEvent(source, after)), threshold: lowInventoryThreshold, before: { inventoryQuantity: was }, after: { inventoryQuantity: now } },
    });
  }
  const previous = lowestPrices(before.prices);
  for (const [currencyCode, current] of lowestPrices(after.prices)) {
    const old = previous.get(currencyCode);
    if (!old) continue;
    const cheaper = compareDecimals(current.amount, old.amount) < 0;
    const newlyOnSale = current.compareAtPrice !== undefined && old.compareAtPrice === undefined;
    if (cheaper || newlyOnSale) {
      events.push({ name: "catalog.variant.price_dropped", payload: { ...(shared ??= variantEvent(source, after)), currencyCode, before: old, after: current } });
    }
  }
  return events;
}

function variantEvent(source: { companyId: string; uploadId: string; product: CatalogProduct }, after: CatalogVariant): CatalogVariantEvent {
  return {
    companyId: source.companyId,
    uploadId: source.uploadId,
    productId: source.product.id,
    variantId: after.id,
    product: productSummary(source.product, after.id),
    variant: after,
  };
}

/** The lowest price of each currency. */
export function lowestPrices(prices: readonly CatalogPrice[]): Map<string, PricePoint> {
  const lowest = new Map<string, PricePoint>();
  for (const price of prices) {
    const known = lowest.get(price.currencyCode);
    if (!known || compareDecimals(price.amount, known.amount) < 0) {
      lowest.set(price.currencyCode, price.compareAtPrice === undefined ? { amount: price.amount } : { amount: price.amount, compareAtPrice: price.compareAtPrice });
    }
  }
  return lowest;
}

function productSummary(product: CatalogProduct, variantId: string): ProductSummary {
  const images = [...(product.images ?? [])].sort((a, b) => (a.position ?? 0) - (b.position ?? 0));
  const image = images.find((candidate) => candidate.variantIds?.includes(variantId)) ?? images[0];
  return { id: product.id, name: product.name, link: product.link, ...(image ? { imageUrl: image.src } : {}) };
}
