import { CATALOG_FIELD_LIMITS as LIMITS, isCurrencyCode, isDecimal, type CatalogProduct, type FieldChecks } from "./product-schema.ts";

/** Anything that breaks a rule: the line goes to valibot, which describes every problem. */
const FAIL = Symbol("fail");
type Checked<T> = T | typeof FAIL;
type Fields = Record<string, unknown>;

const PRODUCT_KEYS = new Set(["id", "name", "description", "brand", "link", "lastUpdated", "categories", "tags", "productOptions", "images", "attributes", "variants", "collections"]);
const VARIANT_KEYS = new Set(["id", "name", "position", "link", "prices", "availableForPurchase", "inventoryQuantity", "productOptionValues", "attributes", "lastUpdated"]);
const PRICE_KEYS = new Set(["currencyCode", "amount", "compareAtPrice"]);
const IMAGE_KEYS = new Set(["src", "alt", "width", "height", "variantIds", "position"]);
const OPTION_KEYS = new Set(["name", "position", "values"]);
const OPTION_VALUE_KEYS = new Set(["productOptionName", "value"]);
const ATTRIBUTE_KEYS = new Set(["name", "value"]);

/**
 * The field rules of product-schema.ts, written out by hand for the lines
 * that pass them all (nearly every line of a real file): four to five times
 * faster than valibot, and with no copy of a product that has no unknown
 * fields. It answers the product exactly as valibot's schema would (unknown
 * fields dropped), or undefined at the first broken rule, and then valibot
 * checks the line again to describe every problem: so error entries come
 * from one place only. Keep the two in step: test/plugins/catalog/
 * quick-check.test.ts holds them to the same answers.
 */
export function createQuickCheck(checks: FieldChecks): (value: Fields) => CatalogProduct | undefined {
  const text = (value: unknown, max: number): boolean => typeof value === "string" && value.length <= max;
  const optionalText = (value: unknown, max: number): boolean => value === undefined || text(value, max);
  const id = (value: unknown): boolean => typeof value === "string" && value.length >= 1 && value.length <= LIMITS.idLength;
  const link = (value: unknown): boolean => typeof value === "string" && value.length <= LIMITS.linkLength && checks.link(value);
  const timestamp = (value: unknown): boolean => typeof value === "string" && checks.timestamp(value);
  const integer = (value: unknown): boolean => Number.isInteger(value);
  const position = (value: unknown): boolean => Number.isInteger(value) && (value as number) >= 0;
  const decimal = (value: unknown): boolean => typeof value === "string" && isDecimal(value);

  /** A list of at most `max` items, each one checked (and possibly copied without unknown fields). */
  function list<T>(value: unknown, max: number, item: (entry: unknown) => Checked<T>): Checked<T[]> {
    if (!Array.isArray(value) || value.length > max) return FAIL;
    let copy: T[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const checked = item(value[index]);
      if (checked === FAIL) return FAIL;
      if (checked !== value[index]) (copy ??= value.slice())[index] = checked;
    }
    return copy ?? (value as T[]);
  }
  const optionalList = <T>(value: unknown, max: number, item: (entry: unknown) => Checked<T>): Checked<T[] | undefined> =>
    value === undefined ? undefined : list(value, max, item);
  const textItem = (max: number) => (value: unknown) => (text(value, max) ? (value as string) : FAIL);
  const anyText = textItem(Infinity);
  const category = textItem(LIMITS.categoryLength);
  const tag = textItem(LIMITS.tagLength);
  const optionValueText = textItem(LIMITS.optionValueLength);

  function attribute(value: unknown): Checked<Fields> {
    if (!isFields(value) || !text(value.name, LIMITS.attributeNameLength) || !text(value.value, LIMITS.attributeValueLength)) return FAIL;
    return known(value, ATTRIBUTE_KEYS);
  }

  function price(value: unknown): Checked<Fields> {
    if (!isFields(value) || typeof value.currencyCode !== "string" || !isCurrencyCode(value.currencyCode) || !decimal(value.amount)) return FAIL;
    if (value.compareAtPrice !== undefined && !decimal(value.compareAtPrice)) return FAIL;
    return known(value, PRICE_KEYS);
  }

  function optionValue(value: unknown): Checked<Fields> {
    if (!isFields(value) || typeof value.productOptionName !== "string" || typeof value.value !== "string") return FAIL;
    return known(value, OPTION_VALUE_KEYS);
  }

  function variant(value: unknown): Checked<Fields> {
    if (!isFields(value)) return FAIL;
    if (!id(value.id) || !text(value.name, LIMITS.nameLength) || !link(value.link) || typeof value.availableForPurchase !== "boolean" || !timestamp(value.lastUpdated)) {
      return FAIL;
    }
    if ((value.position !== undefined && !position(value.position)) || (value.inventoryQuantity !== undefined && !integer(value.inventoryQuantity))) return FAIL;
    const prices = list(value.prices, Infinity, price);
    if (prices === FAIL || prices.length === 0) return FAIL;
    const optionValues = optionalList(value.productOptionValues, Infinity, optionValue);
    const attributes = optionalList(value.attributes, LIMITS.attributes, attribute);
    if (optionValues === FAIL || attributes === FAIL) return FAIL;
    return known(value, VARIANT_KEYS, { prices, productOptionValues: optionValues, attributes });
  }

  function image(value: unknown): Checked<Fields> {
    if (!isFields(value) || !link(value.src) || !optionalText(value.alt, LIMITS.imageAltLength)) return FAIL;
    if ((value.width !== undefined && !position(value.width)) || (value.height !== undefined && !position(value.height))) return FAIL;
    if (value.position !== undefined && !integer(value.position)) return FAIL;
    const variantIds = optionalList(value.variantIds, Infinity, anyText);
    if (variantIds === FAIL) return FAIL;
    return known(value, IMAGE_KEYS, { variantIds });
  }

  function productOption(value: unknown): Checked<Fields> {
    if (!isFields(value) || !text(value.name, LIMITS.optionNameLength) || !position(value.position)) return FAIL;
    const values = list(value.values, LIMITS.optionValues, optionValueText);
    if (values === FAIL) return FAIL;
    return known(value, OPTION_KEYS, { values });
  }

  return (value) => {
    if (!id(value.id) || !text(value.name, LIMITS.nameLength) || !link(value.link) || !timestamp(value.lastUpdated)) return undefined;
    if (!optionalText(value.description, LIMITS.descriptionLength) || !optionalText(value.brand, LIMITS.brandLength)) return undefined;
    const variants = list(value.variants, LIMITS.variants, variant);
    if (variants === FAIL || variants.length === 0) return undefined;
    const lists = {
      variants,
      categories: optionalList(value.categories, LIMITS.categories, category),
      tags: optionalList(value.tags, LIMITS.tags, tag),
      productOptions: optionalList(value.productOptions, LIMITS.productOptions, productOption),
      images: optionalList(value.images, LIMITS.images, image),
      attributes: optionalList(value.attributes, LIMITS.attributes, attribute),
      collections: optionalList(value.collections, LIMITS.collections, anyText),
    };
    for (const list of Object.values(lists)) if (list === FAIL) return undefined;
    return known(value, PRODUCT_KEYS, lists) as unknown as CatalogProduct;
  };
}

/** An object, as valibot's `object` sees one (an array is refused here and described by valibot). */
function isFields(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * `value` itself when every key is known and every checked nested value is
 * the one it holds; otherwise a copy with the known keys only (and the
 * checked nested values), as valibot's `object` answers.
 */
function known(value: Fields, keys: ReadonlySet<string>, nested?: Fields): Fields {
  let clean = true;
  for (const key in value) {
    if (!keys.has(key)) {
      clean = false;
      break;
    }
  }
  if (clean && nested) {
    for (const key in nested) {
      if (nested[key] !== value[key]) {
        clean = false;
        break;
      }
    }
  }
  if (clean) return value;
  const copy: Fields = {};
  for (const key of keys) {
    if (key in value) copy[key] = nested && key in nested ? nested[key] : value[key];
  }
  return copy;
}
