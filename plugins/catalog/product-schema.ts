import * as v from "valibot";

/** The field limits of the catalog file (interface §2.7). */
export const CATALOG_FIELD_LIMITS = {
  idLength: 256,
  nameLength: 256,
  descriptionLength: 1024,
  brandLength: 256,
  linkLength: 2048,
  categories: 10,
  categoryLength: 64,
  tags: 50,
  tagLength: 64,
  productOptions: 10,
  optionNameLength: 256,
  optionValues: 100,
  optionValueLength: 256,
  images: 250,
  imageAltLength: 512,
  attributes: 100,
  attributeNameLength: 64,
  attributeValueLength: 256,
  variants: 100,
  collections: 20,
} as const;

/** A price of a variant. Amounts are decimal strings ("19.99"), compared exactly. */
export interface CatalogPrice {
  /** Three-letter ISO 4217 code, upper case. */
  currencyCode: string;
  amount: string;
  /** Set when the variant is on sale. */
  compareAtPrice?: string;
}

export interface CatalogAttribute {
  name: string;
  value: string;
}

export interface CatalogProductOption {
  name: string;
  position: number;
  values: string[];
}

export interface CatalogProductOptionValue {
  productOptionName: string;
  value: string;
}

export interface CatalogImage {
  src: string;
  alt?: string;
  width?: number;
  height?: number;
  variantIds?: string[];
  position?: number;
}

/** One version of a product: one per combination of options. */
export interface CatalogVariant {
  id: string;
  name: string;
  position?: number;
  link: string;
  prices: CatalogPrice[];
  availableForPurchase: boolean;
  inventoryQuantity?: number;
  productOptionValues?: CatalogProductOptionValue[];
  attributes?: CatalogAttribute[];
  lastUpdated: string;
}

/** One line of a catalog file, as validated (unknown fields dropped). */
export interface CatalogProduct {
  id: string;
  name: string;
  description?: string;
  brand?: string;
  link: string;
  lastUpdated: string;
  categories?: string[];
  tags?: string[];
  productOptions?: CatalogProductOption[];
  images?: CatalogImage[];
  attributes?: CatalogAttribute[];
  variants: CatalogVariant[];
  collections?: string[];
}

const CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf("currency"));
const HTTP_URL = /^https?:\/\/[^\s/?#]+\S*$/i;
const DECIMAL = /^\d{1,15}(?:\.\d{1,10})?$/;
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:[Zz]|[+-](\d{2})(?::?(\d{2}))?)$/;

export function isHttpUrl(text: string): boolean {
  return HTTP_URL.test(text) && URL.canParse(text);
}

/** ISO 8601 date-time with a UTC offset (`Z` or `±hh:mm`), and a date that exists. */
export function isTimestampWithOffset(text: string): boolean {
  const match = TIMESTAMP.exec(text);
  if (!match) return false;
  const [year, month, day, hour, minute, second, offsetHour, offsetMinute] = match.slice(1).map((part) => Number(part ?? 0));
  const daysInMonth = new Date(Date.UTC(year!, month!, 0)).getUTCDate();
  return (
    month! >= 1 && month! <= 12 && day! >= 1 && day! <= daysInMonth &&
    hour! <= 23 && minute! <= 59 && second! <= 59 && offsetHour! <= 23 && offsetMinute! <= 59
  );
}

export const isCurrencyCode = (code: string): boolean => CURRENCIES.has(code);
export const isDecimal = (text: string): boolean => DECIMAL.test(text);

/**
 * The checks of a catalog line that cost the most, made per checker (one
 * per upload): each remembers the last value it passed, since a product and
 * its variants usually share one timestamp and often one link.
 */
export interface FieldChecks {
  link(text: string): boolean;
  timestamp(text: string): boolean;
}

export function createFieldChecks(): FieldChecks {
  return { link: rememberLastPassed(isHttpUrl), timestamp: rememberLastPassed(isTimestampWithOffset) };
}

function rememberLastPassed(check: (text: string) => boolean): (text: string) => boolean {
  let lastPassed: string | undefined;
  return (text) => {
    if (text === lastPassed) return true;
    const passed = check(text);
    if (passed) lastPassed = text;
    return passed;
  };
}

/**
 * Every field rule of a catalog line (the checks across fields are in
 * line-check.ts). valibot's `object` takes arrays too; an array where an
 * object belongs is reported as a wrong type when issues are described.
 * quick-check.ts applies the same rules by hand to lines that pass them all.
 */
export function createProductSchema(checks: FieldChecks = createFieldChecks()) {
  const text = (max: number) => v.pipe(v.string(), v.maxLength(max));
  const id = v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(CATALOG_FIELD_LIMITS.idLength));
  const link = v.pipe(v.string(), v.maxLength(CATALOG_FIELD_LIMITS.linkLength), v.check(checks.link, "must be an http(s) URL"));
  const timestamp = v.pipe(v.string(), v.check(checks.timestamp, "must be an ISO 8601 date-time with a UTC offset, such as 2026-03-01T12:00:00Z"));
  const integer = v.pipe(v.number(), v.integer("must be a whole number"));
  const position = v.pipe(v.number(), v.integer("must be a whole number"), v.minValue(0, "must be 0 or more"));
  const decimal = v.pipe(v.string(), v.check(isDecimal, 'must be a decimal amount such as "19.99"'));
  const list = <TItem extends v.GenericSchema>(item: TItem, max: number) => v.pipe(v.array(item), v.maxLength(max));

  const attribute = v.object({
    name: text(CATALOG_FIELD_LIMITS.attributeNameLength),
    value: text(CATALOG_FIELD_LIMITS.attributeValueLength),
  });

  const price = v.object({
    currencyCode: v.pipe(v.string(), v.check(isCurrencyCode, "must be a three-letter ISO 4217 currency code, such as USD")),
    amount: decimal,
    compareAtPrice: v.optional(decimal),
  });

  const variant = v.object({
    id,
    name: text(CATALOG_FIELD_LIMITS.nameLength),
    position: v.optional(position),
    link,
    prices: v.pipe(v.array(price), v.minLength(1, "needs at least one price")),
    availableForPurchase: v.boolean(),
    inventoryQuantity: v.optional(integer),
    productOptionValues: v.optional(v.array(v.object({ productOptionName: v.string(), value: v.string() }))),
    attributes: v.optional(list(attribute, CATALOG_FIELD_LIMITS.attributes)),
    lastUpdated: timestamp,
  });

  const image = v.object({
    src: link,
    alt: v.optional(text(CATALOG_FIELD_LIMITS.imageAltLength)),
    width: v.optional(position),
    height: v.optional(position),
    variantIds: v.optional(v.array(v.string())),
    position: v.optional(integer),
  });

  const productOption = v.object({
    name: text(CATALOG_FIELD_LIMITS.optionNameLength),
    position,
    values: list(text(CATALOG_FIELD_LIMITS.optionValueLength), CATALOG_FIELD_LIMITS.optionValues),
  });

  return v.object({
    id,
    name: text(CATALOG_FIELD_LIMITS.nameLength),
    description: v.optional(text(CATALOG_FIELD_LIMITS.descriptionLength)),
    brand: v.optional(text(CATALOG_FIELD_LIMITS.brandLength)),
    link,
    lastUpdated: timestamp,
    categories: v.optional(list(text(CATALOG_FIELD_LIMITS.categoryLength), CATALOG_FIELD_LIMITS.categories)),
    tags: v.optional(list(text(CATALOG_FIELD_LIMITS.tagLength), CATALOG_FIELD_LIMITS.tags)),
    productOptions: v.optional(list(productOption, CATALOG_FIELD_LIMITS.productOptions)),
    images: v.optional(list(image, CATALOG_FIELD_LIMITS.images)),
    attributes: v.optional(list(attribute, CATALOG_FIELD_LIMITS.attributes)),
    variants: v.pipe(v.array(variant), v.minLength(1, "needs at least one variant"), v.maxLength(CATALOG_FIELD_LIMITS.variants)),
    collections: v.optional(list(v.string(), CATALOG_FIELD_LIMITS.collections)),
  });
}
