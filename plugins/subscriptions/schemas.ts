import * as v from "valibot";
import { invalidFields, parseOrThrow, plainObject, singleQueryParam, type RawQuery } from "../../src/index.ts";
import { SUBSCRIPTION_CHANNELS, type CustomIdentifier, type ExternalIdentifiers, type Locale, type SubscriptionKind } from "./records.ts";
import { SUBSCRIPTION_TYPES, type SubscriptionType } from "./sign-up-units.ts";

/** `+`, a country code, then digits only: what interface 2.1 calls E.164. */
export const E164 = /^\+[1-9]\d{6,14}$/;
/** RFC 5321 caps a forward path at 256 octets, so an address never exceeds 254. */
export const MAX_EMAIL_LENGTH = 254;
export const MAX_IDENTIFIER_LENGTH = 256;
export const MAX_CUSTOM_IDENTIFIERS = 50;
export const MAX_NAME_LENGTH = 128;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const phoneSchema = v.pipe(
  v.string("must be a string"),
  v.regex(E164, "must be E.164: + and the country code, then digits only (e.g. +19148440001)"),
);

const emailSchema = v.pipe(
  v.string("must be a string"),
  v.maxLength(MAX_EMAIL_LENGTH, `must be at most ${MAX_EMAIL_LENGTH} characters`),
  // A separate step so a too-long string never reaches the regular expression.
  v.check((email) => email.length > MAX_EMAIL_LENGTH || EMAIL.test(email), "must be an email address"),
  v.transform((email) => email.trim().toLowerCase()),
);

const nameSchema = v.pipe(v.string("must be a string"), v.maxLength(MAX_NAME_LENGTH, `must be at most ${MAX_NAME_LENGTH} characters`));

/** The user object (interface 2.1): unknown fields are dropped, and one of phone and email is required. */
const userSchema = v.pipe(
  plainObject({
    phone: v.optional(phoneSchema),
    email: v.optional(emailSchema),
    firstName: v.optional(nameSchema),
    lastName: v.optional(nameSchema),
  }),
  v.check((user) => user.phone !== undefined || user.email !== undefined, "needs a phone or an email"),
);

const identifier = v.pipe(v.string("must be a string"), v.maxLength(MAX_IDENTIFIER_LENGTH, `must be at most ${MAX_IDENTIFIER_LENGTH} characters`));

const customIdentifiersSchema = v.pipe(
  v.union(
    [
      v.array(plainObject({ name: identifier, value: identifier })),
      v.pipe(v.custom<Record<string, unknown>>((value) => typeof value === "object" && value !== null && !Array.isArray(value)), v.record(v.string(), identifier)),
    ],
    "must be a list of {name, value} or an object of names to values",
  ),
  v.transform((value): CustomIdentifier[] =>
    Array.isArray(value) ? value.map(({ name, value }) => ({ name, value })) : Object.entries(value).map(([name, value]) => ({ name, value })),
  ),
  v.maxLength(MAX_CUSTOM_IDENTIFIERS, `must have at most ${MAX_CUSTOM_IDENTIFIERS} entries`),
);

/** externalIdentifiers (interface 2.4, wire names of wire-compat); customIdentifiers answered as a list. */
const externalIdentifiersSchema = v.pipe(
  plainObject({
    clientUserId: v.optional(identifier),
    shopifyId: v.optional(identifier),
    klaviyoId: v.optional(identifier),
    customIdentifiers: v.optional(customIdentifiersSchema),
  }),
  v.transform((ids): ExternalIdentifiers => {
    const result: ExternalIdentifiers = {};
    if (ids.clientUserId !== undefined) result.clientUserId = ids.clientUserId;
    if (ids.shopifyId !== undefined) result.shopifyId = ids.shopifyId;
    if (ids.klaviyoId !== undefined) result.klaviyoId = ids.klaviyoId;
    if (ids.customIdentifiers !== undefined) result.customIdentifiers = ids.customIdentifiers;
    return result;
  }),
);

const twoLetters = v.pipe(v.string("must be a string"), v.regex(/^[A-Za-z]{2}$/, "must be a two-letter code"));

/** `{language, country}`, or a string such as "en-US" or "en_US" (seen from real clients). */
const localeSchema = v.pipe(
  v.union(
    [
      plainObject({ language: twoLetters, country: twoLetters }),
      v.pipe(
        v.string(),
        v.regex(/^[A-Za-z]{2}[-_][A-Za-z]{2}$/, 'must be {language, country} or a string such as "en-US"'),
        v.transform((text) => ({ language: text.slice(0, 2), country: text.slice(3, 5) })),
      ),
    ],
    'must be {language, country} or a string such as "en-US"',
  ),
  v.transform((locale): Locale => ({ language: locale.language.toLowerCase(), country: locale.country.toUpperCase() })),
);

const subscriptionTypeSchema = v.picklist(SUBSCRIPTION_TYPES, `must be one of ${SUBSCRIPTION_TYPES.join(", ")}`);
const channelSchema = v.picklist(SUBSCRIPTION_CHANNELS, `must be one of ${SUBSCRIPTION_CHANNELS.join(", ")}`);

/** The opt-in body (interface 4.4). Rule 1 (signUpSourceId, or locale and subscriptionType) is checked here too. */
export const optInRequestSchema = v.pipe(
  plainObject({
    user: userSchema,
    signUpSourceId: v.optional(v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(MAX_IDENTIFIER_LENGTH))),
    externalIdentifiers: v.optional(externalIdentifiersSchema),
    locale: v.optional(localeSchema),
    subscriptionType: v.optional(subscriptionTypeSchema),
    singleOptIn: v.optional(v.boolean("must be a boolean")),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed || dataset.value.signUpSourceId !== undefined) return;
    const { locale, subscriptionType } = dataset.value;
    if (locale === undefined && subscriptionType === undefined) {
      addIssue({ message: "is required unless locale and subscriptionType are given", path: [pathItem(dataset.value, "signUpSourceId")] });
    } else if (locale === undefined) {
      addIssue({ message: "is required with subscriptionType (or give signUpSourceId)", path: [pathItem(dataset.value, "locale")] });
    } else if (subscriptionType === undefined) {
      addIssue({ message: "is required with locale (or give signUpSourceId)", path: [pathItem(dataset.value, "subscriptionType")] });
    }
  }),
);

/** The unsubscribe body (interface 4.6). */
export const unsubscribeRequestSchema = plainObject({
  user: userSchema,
  subscriptions: v.optional(
    v.pipe(v.array(plainObject({ type: subscriptionTypeSchema, channel: channelSchema }), "must be a list"), v.maxLength(20, "must have at most 20 entries")),
  ),
  notification: v.optional(
    plainObject({
      language: v.optional(v.pipe(v.string("must be a string"), v.maxLength(16))),
      disabled: v.optional(v.boolean("must be a boolean")),
    }),
  ),
});

/** A phone and/or an email. */
export interface UserRef {
  /** E.164. */
  phone?: string;
  email?: string;
}

/** The user object of an opt-in (interface 2.1), with the names a host app may add in process. */
export interface OptInUserInput extends UserRef {
  firstName?: string;
  lastName?: string;
}

/** externalIdentifiers as clients send them: customIdentifiers as a list or as a map of names to values. */
export interface ExternalIdentifiersInput extends Omit<ExternalIdentifiers, "customIdentifiers"> {
  customIdentifiers?: CustomIdentifier[] | Record<string, string>;
}

/** The opt-in request (interface 4.4) as the wire carries it. */
export interface OptInRequest {
  user: OptInUserInput;
  /** An API sign-up unit of the company; or give locale and subscriptionType. */
  signUpSourceId?: string;
  externalIdentifiers?: ExternalIdentifiersInput;
  /** `{language, country}`, or "en-US" / "en_US". */
  locale?: Locale | string;
  subscriptionType?: SubscriptionType;
  /** Default false: a TEXT opt-in waits for the "Y" reply. */
  singleOptIn?: boolean;
}

/** The unsubscribe request (interface 4.6). */
export interface UnsubscribeRequest {
  user: UserRef;
  /** Only these; absent or empty: all of the user's. */
  subscriptions?: SubscriptionKind[];
  notification?: { language?: string; disabled?: boolean };
}

export type ValidOptInRequest = v.InferOutput<typeof optInRequestSchema>;
export type ValidUnsubscribeRequest = v.InferOutput<typeof unsubscribeRequestSchema>;

export const parseOptInRequest = (input: unknown): ValidOptInRequest => parseOrThrow(optInRequestSchema, input, "body");
export const parseUnsubscribeRequest = (input: unknown): ValidUnsubscribeRequest => parseOrThrow(unsubscribeRequestSchema, input, "body");

const addressesSchema = v.object({ phone: v.optional(phoneSchema), email: v.optional(emailSchema) });

/** `GET /v1/subscriptions` and `DELETE /v1/subscriptions` query parameters, before the tolerance rules. */
const userQuerySchema = v.object({ phone: singleQueryParam(), email: singleQueryParam() });

/**
 * Reads phone and email from a query string the way real clients send them
 * (wire-compat): a `+` decoded to a space by a careless client is a `+`, and
 * `email=undefined` is no email. Neither → 400.
 */
export function userFromQuery(raw: RawQuery): UserRef {
  const rawPhone = raw.phone;
  // The eligibility route's usual request, one well-formed phone, answered as the schemas below would answer it.
  if (typeof rawPhone === "string" && raw.email === undefined && E164.test(rawPhone)) return { phone: rawPhone };
  const query = parseOrThrow(userQuerySchema, raw, "query");
  const phone = query.phone === undefined ? undefined : /^ \d/.test(query.phone) ? `+${query.phone.slice(1)}` : query.phone;
  const email = query.email === "undefined" ? undefined : query.email;
  if (phone === undefined && email === undefined) {
    throw invalidFields([
      { path: "phone", message: "phone or email is required" },
      { path: "email", message: "phone or email is required" },
    ]);
  }
  const parsed = v.safeParse(addressesSchema, { phone, email }, { abortEarly: false });
  if (!parsed.success) {
    throw invalidFields(parsed.issues.map((issue) => ({ path: String(issue.path?.[0]?.key ?? "query"), message: issue.message })));
  }
  return parsed.output;
}

function pathItem(input: Record<string, unknown>, key: string): v.ObjectPathItem {
  return { type: "object", origin: "value", input, key, value: input[key] };
}
