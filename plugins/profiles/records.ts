import type { CollectionSpec, Doc, JsonValue } from "../../src/index.ts";

/** The kinds of identifier a profile is known by; `custom` carries a name (`loyaltyId`). */
export const IDENTIFIER_KINDS = ["phone", "email", "clientUserId", "shopifyId", "klaviyoId", "custom"] as const;
export type IdentifierKind = (typeof IDENTIFIER_KINDS)[number];

/** One identifier as requests carry it: E.164 phone, lower-case email, or an id in another system. */
export interface Identifier {
  kind: IdentifierKind;
  /** The name of a custom identifier. */
  name?: string;
  value: string;
}

/**
 * One person known to one company. A profile merged into another stays as an
 * alias (`mergedInto`, always a live profile): writes that raced with the merge
 * may still name it, and every read takes a profile with its aliases.
 */
export interface ProfileRecord extends Doc {
  companyId: string;
  createdAt: number;
  updatedAt: number;
  mergedInto?: string;
}

/** An identifier linked to a profile; `key` is unique per company. */
export interface IdentifierRecord extends Doc, Identifier {
  companyId: string;
  /** `phone:+19148440001`, `custom:["loyaltyId","42"]`: see identifierKey. */
  key: string;
  profileId: string;
  linkedAt: number;
}

export const ATTRIBUTE_TYPES = ["string", "number", "boolean"] as const;
export type AttributeType = (typeof ATTRIBUTE_TYPES)[number];
export type AttributeValue = string | number | boolean;

/** A custom attribute of a profile; the id is `<profileId>:<name>`, so setting one is one upsert. */
export interface AttributeRecord extends Doc {
  companyId: string;
  profileId: string;
  name: string;
  value: AttributeValue;
  setAt: number;
}

/** The type of a company's attribute, fixed by the first value ever set; the id is `<companyId>:<name>`. */
export interface AttributeTypeRecord extends Doc {
  companyId: string;
  name: string;
  type: AttributeType;
  firstSetAt: number;
}

export const EVENT_KINDS = ["custom", "product_view", "add_to_cart", "purchase"] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

export interface ProductPrice {
  value: number;
  /** ISO 4217, upper case; "USD" when the request gave none. */
  currency: string;
}

/** One product of an ecommerce event (the reference's ProductRequest). */
export interface ProductItem {
  productId: string;
  productVariantId: string;
  productImage?: string;
  productUrl?: string;
  name?: string;
  price: ProductPrice[];
  quantity?: number;
}

/**
 * A custom or ecommerce event in a profile's timeline. Its id is made of the
 * company and the externalEventId when one was given (see eventId), so the
 * primary key makes a second event with that id a duplicate.
 */
export interface EventRecord extends Doc {
  companyId: string;
  profileId: string;
  /** Timeline order, newest last: occurredAt (13 digits) then the id, so one string pages by keyset. */
  seq: string;
  kind: EventKind;
  /** The type of a custom event, as sent (case-sensitive). */
  type?: string;
  occurredAt: number;
  receivedAt: number;
  /** The same one twice at a company stores one event. */
  externalEventId?: string;
  properties?: { [key: string]: JsonValue };
  items?: ProductItem[];
  orderId?: string;
  salesChannel?: { channelType: string };
  /** occurredAt was more than 12 hours before receipt: stored, but it triggered nothing. */
  late?: true;
}

/** A property key seen on a custom event type; at most 200 per type and company. */
export interface EventKeyRecord extends Doc {
  companyId: string;
  type: string;
  key: string;
}

export const PROFILES = "profiles_profiles";
export const IDENTIFIERS = "profiles_identifiers";
export const ATTRIBUTES = "profiles_attributes";
export const ATTRIBUTE_TYPES_COLLECTION = "profiles_attribute_types";
export const EVENTS_COLLECTION = "profiles_events";
export const EVENT_KEYS = "profiles_event_keys";

export const profileCollections: readonly CollectionSpec[] = [
  { name: PROFILES, indexes: [{ fields: ["companyId", "mergedInto"] }] },
  {
    name: IDENTIFIERS,
    indexes: [
      { fields: ["companyId", "key"], unique: true },
      { fields: ["companyId", "profileId"] },
    ],
  },
  { name: ATTRIBUTES, indexes: [{ fields: ["companyId", "profileId"] }] },
  { name: ATTRIBUTE_TYPES_COLLECTION, indexes: [{ fields: ["companyId"] }] },
  // One index: the hottest write of the platform pays for no other. externalEventId is unique through the id (eventId).
  { name: EVENTS_COLLECTION, indexes: [{ fields: ["profileId", "seq"] }] },
  { name: EVENT_KEYS, indexes: [{ fields: ["companyId", "type"] }] },
];

/** The unique key of an identifier within a company. */
export function identifierKey(identifier: Identifier): string {
  return identifier.kind === "custom" ? `custom:${JSON.stringify([identifier.name, identifier.value])}` : `${identifier.kind}:${identifier.value}`;
}

/** The id of an event: the company and its externalEventId when it has one, else a new sortable id. */
export function eventId(companyId: string, externalEventId: string | undefined, newId: () => string): string {
  return externalEventId === undefined ? newId() : `${companyId}:${externalEventId}`;
}
