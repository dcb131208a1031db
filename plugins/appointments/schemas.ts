import * as v from "valibot";
import { HttpError, invalidFields, parseOrThrow, plainObject, type JsonValue } from "../../src/index.ts";
import { E164 } from "../subscriptions/index.ts";
import { parseOffset, resolveEventDateTime, type TimeZoneNames } from "./event-time.ts";
import { MESSAGE_TYPES, type MessageType } from "./records.ts";

export const MAX_TYPE_NAME_LENGTH = 256;
/** Ten SMS segments. */
export const MAX_TEXT_LENGTH = 1600;
export const MAX_EXTERNAL_ID_LENGTH = 256;
export const MAX_NAME_LENGTH = 128;
export const MAX_EMAIL_LENGTH = 254;
/** metadata as JSON, in UTF-8 bytes. */
export const MAX_METADATA_BYTES = 16 * 1024;
/** Uuids are ours; anything longer is not one of them. */
const MAX_UUID_LENGTH = 64;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const text = (max: number) => v.pipe(v.string("must be a string"), v.maxLength(max, `must be at most ${max} characters`));
const nonEmpty = (max: number) => v.pipe(text(max), v.check((value) => value.trim().length > 0, "must not be empty"));

const eventTypeRef = plainObject({ uuid: nonEmpty(MAX_UUID_LENGTH) });
const messageType = v.picklist(MESSAGE_TYPES, `must be one of ${MESSAGE_TYPES.join(", ")}`);

const phone = v.pipe(v.string("must be a string"), v.regex(E164, "must be E.164: + and the country code, then digits only (e.g. +19148440001)"));

const offset = v.pipe(
  text(64),
  v.check((value) => parseOffset(value) !== undefined, "must be an ISO 8601 duration such as PT3H or P1D (not negative, at most 366 days)"),
);

// Whether the date and time exist does not depend on the zone; the zone only places them.
const eventDateTime = v.pipe(
  text(64),
  v.check((value) => resolveEventDateTime(value, "UTC") !== undefined, "must be an ISO 8601 date and time such as 2026-03-08T15:00 (an offset is optional)"),
);

const email = v.pipe(
  text(MAX_EMAIL_LENGTH),
  v.check((value) => EMAIL.test(value), "must be an email address"),
  v.transform((value) => value.trim().toLowerCase()),
);

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

const metadata = v.pipe(
  v.custom<Record<string, unknown>>(isPlainObject, "must be an object"),
  v.check((value) => jsonBytes(value) <= MAX_METADATA_BYTES, `must be at most ${MAX_METADATA_BYTES} bytes as JSON`),
  // In-process callers may pass values JSON cannot hold: store what a JSON client would have sent.
  v.transform((value) => JSON.parse(JSON.stringify(value)) as { [key: string]: JsonValue }),
);

/** Absent and null mean the same: "not given" on create, "remove it" on update. */
const clearable = <TSchema extends v.GenericSchema>(schema: TSchema) => v.nullish(schema);

const messageFields = {
  eventType: eventTypeRef,
  messageType,
  text: nonEmpty(MAX_TEXT_LENGTH),
};

/** `uuid` and `macros` are generated: in a request they are ignored, so a client may PUT back what it read. */
export const createMessageSchema = plainObject(messageFields);
export const updateMessageSchema = plainObject({
  eventType: v.optional(messageFields.eventType),
  messageType: v.optional(messageFields.messageType),
  text: v.optional(messageFields.text),
});

export function reminderSchemas(zones: TimeZoneNames) {
  const fields = {
    eventType: eventTypeRef,
    phone,
    eventDateTime,
    subscriberTimeZone: v.pipe(
      text(64),
      v.check((name) => zones.isTimeZone(name), "must be an IANA time zone name such as America/New_York"),
    ),
    remindTimeOffset: clearable(offset),
    followUpTimeOffset: clearable(offset),
    externalEventId: clearable(nonEmpty(MAX_EXTERNAL_ID_LENGTH)),
    firstName: clearable(text(MAX_NAME_LENGTH)),
    lastName: clearable(text(MAX_NAME_LENGTH)),
    emailAddress: clearable(email),
    metadata: clearable(metadata),
    sendEligibleSubscribersOnly: clearable(v.boolean("must be a boolean")),
  };
  return {
    create: plainObject(fields),
    update: plainObject({
      ...fields,
      eventType: v.optional(fields.eventType),
      phone: v.optional(fields.phone),
      eventDateTime: v.optional(fields.eventDateTime),
      subscriberTimeZone: v.optional(fields.subscriberTimeZone),
    }),
  };
}

export const createTypeSchema = plainObject({ type: nonEmpty(MAX_TYPE_NAME_LENGTH) });

/** `POST /events/types`. */
export interface AppointmentTypeInput {
  type: string;
}

/** `POST /events/types/messages` (interface 4.14). */
export interface AppointmentMessageInput {
  eventType: { uuid: string };
  messageType: MessageType;
  text: string;
}

/** `PUT /events/types/messages/{uuid}`: any subset. */
export type AppointmentMessagePatch = Partial<AppointmentMessageInput>;

/** `POST /events/reminders` (interface 4.15). Optional fields also take null. */
export interface ReminderInput {
  eventType: { uuid: string };
  /** E.164. */
  phone: string;
  /** ISO 8601; without an offset, a wall-clock time in `subscriberTimeZone`. */
  eventDateTime: string;
  /** IANA name, e.g. America/New_York. */
  subscriberTimeZone: string;
  /** ISO 8601 duration; default PT3H. */
  remindTimeOffset?: string | null;
  followUpTimeOffset?: string | null;
  externalEventId?: string | null;
  firstName?: string | null;
  lastName?: string | null;
  emailAddress?: string | null;
  metadata?: Record<string, unknown> | null;
  /** Default false. */
  sendEligibleSubscribersOnly?: boolean | null;
}

/** `PUT /events/reminders/{uuid}`: any subset; null removes an optional field (a null offset is PT3H again). */
export type ReminderPatch = Partial<ReminderInput>;

export type ValidTypeInput = v.InferOutput<typeof createTypeSchema>;
export type ValidMessageInput = v.InferOutput<typeof createMessageSchema>;
export type ValidMessagePatch = v.InferOutput<typeof updateMessageSchema>;
export type ValidReminderInput = v.InferOutput<ReturnType<typeof reminderSchemas>["create"]>;
export type ValidReminderPatch = v.InferOutput<ReturnType<typeof reminderSchemas>["update"]>;

/** Like `parseOrThrow`, with "is required" for a missing field instead of valibot's wording. */
function parse<TSchema extends v.GenericSchema>(schema: TSchema, input: unknown): v.InferOutput<TSchema> {
  try {
    return parseOrThrow(schema, input, "body");
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    throw invalidFields(error.details.map((detail) => (detail.message.startsWith("Invalid key") ? { ...detail, message: "is required" } : detail)));
  }
}

export const parseTypeInput = (input: unknown): ValidTypeInput => parse(createTypeSchema, input);
export const parseMessageInput = (input: unknown): ValidMessageInput => parse(createMessageSchema, input);
export const parseMessagePatch = (input: unknown): ValidMessagePatch => parse(updateMessageSchema, input);
/** The reminder parsers of one kit (its zone names are remembered per kit). */
export function reminderParsers(zones: TimeZoneNames) {
  const schemas = reminderSchemas(zones);
  return {
    input: (input: unknown): ValidReminderInput => parse(schemas.create, input),
    patch: (input: unknown): ValidReminderPatch => parse(schemas.update, input),
  };
}
