/** The "existing app" of the embedding examples: a tiny shop with its own catalog and orders. */
export interface Product {
  sku: string;
  name: string;
  priceCents: number;
}

export const CATALOG: readonly Product[] = [
  { sku: "beans-1kg", name: "Coffee beans, 1 kg", priceCents: 2400 },
  { sku: "mug", name: "Enamel mug", priceCents: 1200 },
];

/** Validates an order body the host parsed; answers what the shop's route sends back. */
export function placeOrder(body: unknown): { status: number; body: unknown } {
  const order = typeof body === "object" && body !== null ? (body as { sku?: unknown; quantity?: unknown }) : {};
  const product = CATALOG.find((item) => item.sku === order.sku);
  if (!product) return { status: 400, body: { error: "unknown sku" } };
  const quantity = order.quantity ?? 1;
  if (typeof quantity !== "number" || !Number.isInteger(quantity) || quantity < 1) return { status: 400, body: { error: "quantity must be a positive integer" } };
  return { status: 201, body: { sku: product.sku, quantity, totalCents: product.priceCents * quantity } };
}
