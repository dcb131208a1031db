import * as v from "valibot";
import { invalidFields, issuesToDetails, plainObject, type JsonValue } from "../../src/index.ts";

export const MAX_PHONE_INPUT_LENGTH = 64;
export const MAX_IDENTIFIER_LENGTH = 256;
export const MAX_NAME_LENGTH = 128;
export const MAX_EMAIL_LENGTH = 254;
/** `metadata` of an add-subscriber, as JSON text. */
export const MAX_METADATA_LENGTH = 10_000;
/** The text of one message as sent (prefix and link included): what SMS providers accept in one request. */
export const MAX_MESSAGE_LENGTH = 1600;
export const MAX_URL_LENGTH = 2048;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const text = (max: number) => v.pipe(v.string("must be a string"), v.maxLength(max, `must be at most ${max} characters`));

const phoneText = v.pipe(text(MAX_PHONE_INPUT_LENGTH), v.check((phone) => phone.trim() !== "", "must not be empty"));

const email = v.pipe(
  text(MAX_EMAIL_LENGTH),
  v.check((value) => value.length > MAX_EMAIL_LENGTH || EMAIL.test(value.trim()), "must be an email address"),
  v.transform((value) => value.trim().toLowerCase()),
);

const httpUrl = v.pipe(
  text(MAX_URL_LENGTH),
  v.check((value) => value.length > MAX_URL_LENGTH || isHttpUrl(value), "must be an http or https URL"),
);

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}

/** `true`, `false`, `"true"` or `"false"` (wire-compat: clients send both). */
const booleanLike = v.pipe(
  v.union([v.boolean(), v.picklist(["true", "false"])], 'must be true or false (a boolean, or the string "true" or "false")'),
  v.transform((value) => value === true || value === "true"),
);

/**
 * Any object; its known keys have the types of their top-level twins, other
 * keys are kept as given. The reference types it as a string, so the JSON text
 * of an object is read too.
 */
const metadataSchema = v.pipe(
  v.unknown(),
  v.transform((value) => (typeof value === "string" ? jsonObjectOrText(value) : value)),
  v.custom<Record<string, unknown>>((value) => typeof value === "object" && value !== null && !Array.isArray(value), "must be an object (or its JSON text)"),
  v.check((value) => JSON.stringify(value).length <= MAX_METADATA_LENGTH, `must be at most ${MAX_METADATA_LENGTH} characters as JSON`),
  v.looseObject({
    email: v.optional(email),
    creativeId: v.optional(v.union([text(MAX_IDENTIFIER_LENGTH), v.pipe(v.number(), v.transform(String))], "must be a string")),
    first_name: v.optional(text(MAX_NAME_LENGTH)),
    firstName: v.optional(text(MAX_NAME_LENGTH)),
    last_name: v.optional(text(MAX_NAME_LENGTH)),
    lastName: v.optional(text(MAX_NAME_LENGTH)),
  }),
);

function jsonObjectOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** `POST /1/add-subscribers` (interface 4.7; wire-compat: email and names at the top level or in metadata). */
export const addSubscriberSchema = v.pipe(
  plainObject({
    phone: phoneText,
    visitorId: v.optional(text(MAX_IDENTIFIER_LENGTH)),
    metadata: v.optional(metadataSchema),
    creativeId: v.optional(text(MAX_IDENTIFIER_LENGTH)),
    email: v.optional(email),
    first_name: v.optional(text(MAX_NAME_LENGTH)),
    firstName: v.optional(text(MAX_NAME_LENGTH)),
    last_name: v.optional(text(MAX_NAME_LENGTH)),
    lastName: v.optional(text(MAX_NAME_LENGTH)),
  }),
  v.transform((body): AddSubscriberInput => {
    const known = body.metadata;
    const pick = (...values: Array<string | undefined>) => values.find((value) => value !== undefined && value !== "");
    const input: AddSubscriberInput = { phone: body.phone };
    const fields = {
      email: pick(body.email, known?.email),
      visitorId: pick(body.visitorId),
      creativeId: pick(body.creativeId, known?.creativeId),
      firstName: pick(body.firstName, body.first_name, known?.firstName, known?.first_name),
      lastName: pick(body.lastName, body.last_name, known?.lastName, known?.last_name),
    };
    for (const [key, value] of Object.entries(fields)) if (value !== undefined) input[key as keyof typeof fields] = value;
    if (body.metadata) input.metadata = body.metadata as Record<string, JsonValue>;
    return input;
  }),
);

export const parseAddSubscriber = (body: unknown): AddSubscriberInput => parseLegacyBody(addSubscriberSchema, body);

/** `POST /1/add-subscribers` as callers send it (wire-compat: names and email at the top level or in metadata). */
export interface AddSubscriberRequest {
  /** As callers write it: `+15555555555`, `555-555-5555`, `(555) 555-5555`. */
  phone: string;
  visitorId?: string;
  /** Any object (or its JSON text); `email`, `first_name`, `creativeId`... are read from it too. */
  metadata?: Record<string, unknown> | string;
  creativeId?: string;
  email?: string;
  first_name?: string;
  firstName?: string;
  last_name?: string;
  lastName?: string;
}

/** An add-subscriber, validated: top-level values win over those in metadata. */
export interface AddSubscriberInput {
  /** As the caller wrote it; read with `readPhoneNumber`. */
  phone: string;
  /** Lower case. */
  email?: string;
  visitorId?: string;
  creativeId?: string;
  firstName?: string;
  lastName?: string;
  metadata?: Record<string, JsonValue>;
}

/** `POST /1/subscribers/unsubscribe` (interface 4.8). */
export const removeSubscriberSchema = plainObject({
  phone: phoneText,
  sendOptOutMessage: booleanLike,
});

/** `POST /1/subscribers/unsubscribe` as callers send it. */
export interface RemoveSubscriberRequest {
  phone: string;
  sendOptOutMessage: boolean | "true" | "false";
}

/** A remove-subscriber, validated: `sendOptOutMessage` read as a boolean. */
export interface RemoveSubscriberInput {
  phone: string;
  sendOptOutMessage: boolean;
}

export const parseRemoveSubscriber = (body: unknown): RemoveSubscriberInput => parseLegacyBody(removeSubscriberSchema, body);

const messageFields = {
  to: phoneText,
  body: v.pipe(text(MAX_MESSAGE_LENGTH), v.check((body) => body.trim() !== "", "must not be empty")),
  mediaUrl: v.optional(httpUrl),
};
const transactionalType = v.picklist(["TRANSACTIONAL"], 'must be "TRANSACTIONAL" (case-sensitive)');

/** `POST /1/messages` (interface 4.10): `type` is required. */
export const transactionalMessageSchema = plainObject({
  ...messageFields,
  type: transactionalType,
  link: v.optional(httpUrl),
});

/** `POST /v1/messages` on the messages host (interface 4.9): `type` optional, `messageId` for tracking. */
export const archivedMessageSchema = plainObject({
  ...messageFields,
  type: v.optional(transactionalType),
  messageId: v.optional(text(MAX_IDENTIFIER_LENGTH)),
});

/** `POST /1/messages` as callers send it. */
export interface TransactionalMessageRequest {
  to: string;
  body: string;
  type: "TRANSACTIONAL";
  link?: string;
  mediaUrl?: string;
}

/** The archived `POST /v1/messages` as callers send it. */
export interface ArchivedMessageRequest {
  to: string;
  body: string;
  type?: "TRANSACTIONAL";
  messageId?: string;
  mediaUrl?: string;
}

/** A transactional message to send, from either route. */
export interface MessageInput {
  /** As the caller wrote it; sanitised with `readPhoneNumber`. */
  to: string;
  body: string;
  /** An image: the message goes as MMS. */
  mediaUrl?: string;
  /** Appended to the body after a space. */
  link?: string;
  /** The caller's tracking id (archived endpoint), kept in the outbox message's tags. */
  messageId?: string;
}

export const parseTransactionalMessage = (body: unknown): MessageInput => parseLegacyBody(transactionalMessageSchema, body);
export const parseArchivedMessage = (body: unknown): MessageInput => parseLegacyBody(archivedMessageSchema, body);

/**
 * Validates a legacy request body: 400 naming every offending field, and
 * "is required" for a missing one (valibot's own words are "Invalid key").
 */
export function parseLegacyBody<TSchema extends v.GenericSchema>(schema: TSchema, input: unknown): v.InferOutput<TSchema> {
  const result = v.safeParse(schema, input, { abortEarly: false });
  if (result.success) return result.output;
  throw invalidFields(
    result.issues.flatMap((issue) => {
      const missing = issue.kind === "schema" && issue.type === "object" && issue.input === undefined && issue.path !== undefined;
      return issuesToDetails([missing ? { ...issue, message: "is required" } : issue], "body");
    }),
  );
}
