import { createWriteStream } from "node:fs";
import { once } from "node:events";

/** A small deterministic PRNG (mulberry32), so every run writes the same file. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ["linen", "merino", "classic", "organic", "everyday", "relaxed", "slim", "heritage", "washed", "cotton", "trail", "studio"];
const KINDS = ["shirt", "sweater", "trouser", "jacket", "sneaker", "tote", "scarf", "hoodie", "dress", "cap"];
const COLORS = ["black", "navy", "olive", "sand", "white", "rust"];
const SIZES = ["XS", "S", "M", "L", "XL"];

/** One realistic product line (about 1 KB): 1 to 5 variants, images, options, attributes. */
export function productLine(index: number, next: () => number): string {
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  const id = `prod-${index}`;
  const name = `${pick(WORDS)} ${pick(WORDS)} ${pick(KINDS)}`;
  const link = `https://shop.example.com/products/${id}`;
  const color = pick(COLORS);
  // Most products have one or two variants; a few have five.
  const roll = next();
  const variantCount = roll < 0.4 ? 1 : roll < 0.6 ? 2 : roll < 0.75 ? 3 : roll < 0.9 ? 4 : 5;
  const sizes = SIZES.slice(0, variantCount);
  const updated = "2026-02-14T09:30:00Z";
  const variants = sizes.map((size, position) => ({
    id: `${id}-${size.toLowerCase()}`,
    name: `${name} ${size}`,
    position,
    link,
    prices: [{ currencyCode: "USD", amount: (20 + Math.floor(next() * 8000) / 100).toFixed(2) }],
    availableForPurchase: next() > 0.1,
    inventoryQuantity: Math.floor(next() * 200),
    productOptionValues: [{ productOptionName: "Size", value: size }],
    lastUpdated: updated,
  }));
  return JSON.stringify({
    id,
    name,
    description: `A ${name} in ${color}, made to last.`,
    brand: "Example Goods",
    link,
    lastUpdated: updated,
    categories: [pick(KINDS)],
    tags: [pick(WORDS), color],
    productOptions: [{ name: "Size", position: 0, values: sizes }],
    images: [{ src: `https://cdn.example.com/${id}/front.jpg`, alt: name, width: 1200, height: 1600, variantIds: [variants[0]!.id] }],
    attributes: [{ name: "material", value: pick(WORDS) }],
    variants,
  });
}

/** Writes `lines` product lines to `path`, respecting back-pressure; resolves with the byte count. */
export async function writeCatalogFile(path: string, lines: number, seed = 1): Promise<number> {
  const next = random(seed);
  const out = createWriteStream(path);
  let bytes = 0;
  for (let index = 0; index < lines; index++) {
    const line = `${productLine(index, next)}\n`;
    bytes += Buffer.byteLength(line);
    if (!out.write(line)) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
  return bytes;
}

/**
 * Files that hold almost nothing a catalog can use, each with the line it repeats. Those
 * starting with a product hold one valid line first, so they are read to the end.
 */
const DEGENERATE_LINES = {
  "blank lines": "\n",
  "product, then blank lines": "\n",
  "product, then CRLF blank lines": "\r\n",
  "product, then lines of white space": "  \n",
  "product, then lines that are not JSON": "x\n",
  "product, then empty objects": "{}\n",
  "lines that are not JSON": "x\n",
} as const;

export type DegenerateFile = keyof typeof DEGENERATE_LINES;
export const DEGENERATE_FILES = Object.keys(DEGENERATE_LINES) as DegenerateFile[];

/** Writes a degenerate file of about `bytes` bytes to `path`; resolves with its byte count. */
export async function writeDegenerateFile(path: string, kind: DegenerateFile, bytes: number): Promise<number> {
  const line = DEGENERATE_LINES[kind];
  const first = kind.startsWith("product") ? `${productLine(0, random(1))}\n` : "";
  const block = line.repeat(Math.ceil(64 * 1024 / line.length));
  const out = createWriteStream(path);
  let written = Buffer.byteLength(first);
  out.write(first);
  while (written < bytes) {
    written += block.length;
    if (!out.write(block)) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
  return written;
}
