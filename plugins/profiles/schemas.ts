import { DateTime } from "luxon";
import * as v from "valibot";
import { plainObject, type JsonValue } from "../../src/index.ts";
import type { AttributeValue, Identifier, ProductItem } from "./records.ts";

/** Event types, property keys and attribute names: at most this many characters (the reference's attribute limit). */
export const MAX_NAME_LENGTH = 200;
/** Property keys of one custom event, and distinct keys of one event type at one company (the reference's limit). */
export const MAX_PROPERTY_KEYS = 200;
/** Attributes set by one request. */
export const MAX_ATTRIBUTES_PER_REQUEST = 200;
/** Characters of a string attribute value. */
export const MAX_ATTRIBUTE_VALUE_LENGTH = 1024;
/** Products of one ecommerce event. */
export const MAX_ITEMS = 100;
/** Identifiers of other systems (the subscriptions plugin's limits). */
export const MAX_IDENTIFIER_LENGTH = 256;
export const MAX_CUSTOM_IDENTIFIERS = 50;
export const MAX_EMAIL_LENGTH = 254;
const MAX_URL_LENGTH = 2048;

/** Characters the reference forbids in a custom event's type, and in a property key. */
const TYPE_FORBIDDEN = /["'(){}[\]\\|,]/;
const KEY_FORBIDDEN = /["{}[\]\\|]/;
const E164 = /^\+[1-9]\d{6,14}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** RFC 3339, plus the reference's `+0000` offset without a colon. */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:?\d{2})$/;

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const text = (max: number) => v.pipe(v.string("must be a string"), v.maxLength(max, `must be at most ${max} characters`));
const nonEmptyText = (max: number) => v.pipe(text(max), v.minLength(1, "must not be empty"));
const identifierText = nonEmptyText(MAX_IDENTIFIER_LENGTH);

const phoneSchema = v.pipe(v.string("must be a string"), v.regex(E164, "must be E.164: + and the country code, then digits only (e.g. +19148440001)"));
const emailSchema = v.pipe(
  text(MAX_EMAIL_LENGTH),
  v.check((email) => EMAIL.test(email), "must be an email address"),
  v.transform((email) => email.trim().toLowerCase()),
);

/**
 * A list of `{name, value}` or, as one CDP destination sends it, an object of
 * names to values: an object is read as the list of its entries, so errors
 * name an entry by its place (`customIdentifiers.0.value`) either way.
 */
const customIdentifiersSchema = v.pipe(
  v.custom<unknown[] | Record<string, unknown>>((value) => Array.isArray(value) || isPlainObject(value), "must be a list of {name, value} or an object of names to values"),
  v.transform((value) => (Array.isArray(value) ? value : Object.entries(value).map(([name, value]) => ({ name, value })))),
  v.array(plainObject({ name: identifierText, value: identifierText })),
  v.transform((entries) => entries.map(({ name, value }) => ({ name, value }))),
  v.maxLength(MAX_CUSTOM_IDENTIFIERS, `must have at most ${MAX_CUSTOM_IDENTIFIERS} entries`),
  v.description("A list of {name, value}, or an object of names to values"),
);

/** The identifiers of other systems, as `externalIdentifiers` and the identity route carry them. */
const externalEntries = {
  clientUserId: v.optional(identifierText),
  shopifyId: v.optional(identifierText),
  klaviyoId: v.optional(identifierText),
  customIdentifiers: v.optional(customIdentifiersSchema),
};

/** The identifiers of other systems as requests carry them, validated. */
export type ExternalIdentifierFields = { clientUserId?: string; shopifyId?: string; klaviyoId?: string; customIdentifiers?: Array<{ name: string; value: string }> };

function identifiersOf(fields: ExternalIdentifierFields & { phone?: string; email?: string }): Identifier[] {
  const identifiers: Identifier[] = [];
  for (const kind of ["phone", "email", "clientUserId", "shopifyId", "klaviyoId"] as const) {
    const value = fields[kind];
    if (value !== undefined) identifiers.push({ kind, value });
  }
  for (const { name, value } of fields.customIdentifiers ?? []) identifiers.push({ kind: "custom", name, value });
  return identifiers;
}

/**
 * The reference's EventUser: phone, email, externalIdentifiers. One of them is
 * required here; that an external identifier alone is already linked to a
 * phone or email is checked against the stored profiles.
 */
const eventUserSchema = v.pipe(
  plainObject({ phone: v.optional(phoneSchema), email: v.optional(emailSchema), externalIdentifiers: v.optional(plainObject(externalEntries)) }),
  v.transform((user) => identifiersOf({ ...user.externalIdentifiers, phone: user.phone, email: user.email })),
  v.check((identifiers) => identifiers.length > 0, "needs a phone, an email or an external identifier"),
);

/** Milliseconds since 1970 of an RFC 3339 timestamp (or the reference's `+0000` form); undefined when it is not one. */
export function parseTimestamp(value: string): number | undefined {
  if (!TIMESTAMP.test(value)) return undefined;
  const normalized = value.replace(/([+-]\d{2})(\d{2})$/, "$1:$2");
  const parsed = DateTime.fromISO(normalized, { setZone: true });
  return parsed.isValid && parsed.toMillis() >= 0 ? parsed.toMillis() : undefined;
}

const timestampSchema = v.pipe(
  v.string("must be a string"),
  v.maxLength(64, "must be an RFC 3339 date-time"),
  v.transform(parseTimestamp),
  v.check((ms) => ms !== undefined, "must be an RFC 3339 date-time after 1970, such as 2021-03-30T14:38:29.000Z or 2021-03-30T14:38:29+0000"),
);

/** Both spellings are read: one real client sends `occuredAt`. */
const timeEntries = { occurredAt: v.optional(timestampSchema), occuredAt: v.optional(timestampSchema) };
const externalEventIdSchema = v.optional(identifierText);

export interface EventFields {
  user: Identifier[];
  /** Absent: the server's now. */
  occurredAt?: number;
  /** The name of the field it came from, for errors about its value. */
  occurredAtField: "occurredAt" | "occuredAt";
  externalEventId?: string;
}

const eventFields = ({ user, occurredAt, occuredAt, externalEventId }: { user: Identifier[]; occurredAt?: number; occuredAt?: number; externalEventId?: string }): EventFields => ({
  user,
  occurredAt: occurredAt ?? occuredAt,
  occurredAtField: occurredAt === undefined && occuredAt !== undefined ? "occuredAt" : "occurredAt",
  ...(externalEventId !== undefined ? { externalEventId } : {}),
});

/** Custom event properties: any values, keys without the forbidden characters, at most 200 of them. */
const propertiesSchema = v.pipe(
  v.custom<Record<string, JsonValue>>(isPlainObject, "must be an object"),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const keys = Object.keys(dataset.value);
    if (keys.length > MAX_PROPERTY_KEYS) addIssue({ message: `must have at most ${MAX_PROPERTY_KEYS} keys` });
    for (const key of keys) {
      const problem = key === "" ? "a key must not be empty" : key.length > MAX_NAME_LENGTH ? `a key must be at most ${MAX_NAME_LENGTH} characters` : KEY_FORBIDDEN.test(key) ? 'a key may not contain " { } [ ] \\ |' : undefined;
      if (problem) addIssue({ message: problem, path: [keyPath(dataset.value, key)] });
    }
  }),
);

const customEventSchema = v.pipe(
  plainObject({
    type: v.pipe(nonEmptyText(MAX_NAME_LENGTH), v.check((type) => !TYPE_FORBIDDEN.test(type), "may not contain \" ' ( ) { } [ ] \\ | ,")),
    properties: v.optional(propertiesSchema),
    externalEventId: externalEventIdSchema,
    user: eventUserSchema,
    ...timeEntries,
  }),
  v.transform((body) => ({ ...eventFields(body), type: body.type, ...(body.properties !== undefined ? { properties: body.properties } : {}) })),
);

const priceSchema = plainObject({
  value: v.pipe(v.number("must be a number"), v.finite("must be a finite number"), v.minValue(0, "must not be negative")),
  currency: v.optional(v.pipe(v.string("must be a string"), v.regex(/^[A-Za-z]{3}$/, "must be a three-letter ISO 4217 code"), v.toUpperCase()), "USD"),
});

/** The reference's ProductRequest. */
const itemSchema = v.pipe(
  plainObject({
    productId: nonEmptyText(MAX_IDENTIFIER_LENGTH),
    productVariantId: nonEmptyText(MAX_IDENTIFIER_LENGTH),
    productImage: v.optional(text(MAX_URL_LENGTH)),
    productUrl: v.optional(text(MAX_URL_LENGTH)),
    name: v.optional(text(MAX_IDENTIFIER_LENGTH)),
    price: v.pipe(v.array(priceSchema, "must be a list"), v.minLength(1, "must have at least one price"), v.maxLength(10, "must have at most 10 prices")),
    quantity: v.optional(v.pipe(v.number("must be a number"), v.safeInteger("must be an integer"), v.minValue(0, "must not be negative"))),
  }),
  v.transform((item): ProductItem => {
    const product: ProductItem = { productId: item.productId, productVariantId: item.productVariantId, price: item.price };
    for (const key of ["productImage", "productUrl", "name", "quantity"] as const) if (item[key] !== undefined) (product as unknown as Record<string, unknown>)[key] = item[key];
    return product;
  }),
);

const itemsSchema = v.pipe(v.array(itemSchema, "must be a list"), v.minLength(1, "must have at least one product"), v.maxLength(MAX_ITEMS, `must have at most ${MAX_ITEMS} products`));

export const SALES_CHANNELS = ["WEB", "IOS_APP", "ANDROID_APP", "IN_STORE", "PHONE", "OTHER", ""] as const;

const ecommerceEntries = { items: itemsSchema, externalEventId: externalEventIdSchema, user: eventUserSchema, ...timeEntries };

const ecommerceEventSchema = v.pipe(
  plainObject(ecommerceEntries),
  v.transform((body) => ({ ...eventFields(body), items: body.items })),
);

const purchaseEventSchema = v.pipe(
  plainObject({
    ...ecommerceEntries,
    orderId: v.optional(nonEmptyText(MAX_IDENTIFIER_LENGTH)),
    salesChannel: v.optional(plainObject({ channelType: v.picklist(SALES_CHANNELS, `must be one of ${SALES_CHANNELS.filter(Boolean).join(", ")} or ""`) })),
  }),
  v.transform((body) => ({
    ...eventFields(body),
    items: body.items,
    ...(body.orderId !== undefined ? { orderId: body.orderId } : {}),
    ...(body.salesChannel !== undefined ? { salesChannel: { channelType: body.salesChannel.channelType } } : {}),
  })),
);

const attributeValueSchema = v.union(
  [v.pipe(v.string(), v.maxLength(MAX_ATTRIBUTE_VALUE_LENGTH, `must be at most ${MAX_ATTRIBUTE_VALUE_LENGTH} characters`)), v.pipe(v.number(), v.finite("must be a finite number")), v.boolean()],
  "must be a string, a number or a boolean (lists and objects are refused)",
);

/** `{properties: {name: value}, user}`: flat values whose type the first value of each name fixed. */
const attributesRequestSchema = v.pipe(
  plainObject({
    properties: v.pipe(
      v.custom<Record<string, unknown>>(isPlainObject, "must be an object of attribute names to values"),
      v.rawCheck(({ dataset, addIssue }) => {
        if (!dataset.typed) return;
        const entries = Object.entries(dataset.value);
        if (entries.length > MAX_ATTRIBUTES_PER_REQUEST) addIssue({ message: `must have at most ${MAX_ATTRIBUTES_PER_REQUEST} attributes` });
        for (const [name, value] of entries) {
          const path: [v.IssuePathItem] = [keyPath(dataset.value, name)];
          if (name === "" || name.length > MAX_NAME_LENGTH) addIssue({ message: `a name must have 1 to ${MAX_NAME_LENGTH} characters`, path });
          const parsed = v.safeParse(attributeValueSchema, value);
          if (!parsed.success) addIssue({ message: parsed.issues[0].message, path });
        }
      }),
      v.transform((properties) => properties as Record<string, AttributeValue>),
    ),
    user: eventUserSchema,
  }),
);

/** The identity route's flat body: a clientUserId or a custom identifier alone links nothing and is refused. */
const identifyRequestSchema = v.pipe(
  plainObject({ phone: v.optional(phoneSchema), email: v.optional(emailSchema), ...externalEntries }),
  v.transform(identifiersOf),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const identifiers = dataset.value;
    if (identifiers.length === 0) {
      for (const key of ["phone", "email"]) addIssue({ message: "phone or email is required (or two other identifiers to link)", path: [keyPath({}, key)] });
    } else if (identifiers.length === 1 && identifiers[0]!.kind !== "phone" && identifiers[0]!.kind !== "email") {
      const key = identifiers[0]!.kind === "custom" ? "customIdentifiers" : identifiers[0]!.kind;
      addIssue({ message: "alone links nothing: give a phone or an email with it, or another identifier", path: [keyPath({}, key)] });
    }
  }),
);

export type CustomEventInput = v.InferOutput<typeof customEventSchema>;
export type EcommerceEventInput = v.InferOutput<typeof ecommerceEventSchema>;
export type PurchaseEventInput = v.InferOutput<typeof purchaseEventSchema>;
export type AttributesInput = v.InferOutput<typeof attributesRequestSchema>;

export const profileSchemas = {
  customEvent: customEventSchema,
  ecommerceEvent: ecommerceEventSchema,
  purchaseEvent: purchaseEventSchema,
  attributes: attributesRequestSchema,
  identify: identifyRequestSchema,
};

/** The path item of one key of an object, for an issue about that key. */
function keyPath(input: Record<string, unknown>, key: string): v.ObjectPathItem {
  return { type: "object", origin: "value", input, key, value: input[key] };
}

export { phoneSchema, emailSchema };
