import * as v from "valibot";
import { invalidFields, parseOrThrow, plainObject } from "../../src/index.ts";
import { readPhoneNumber } from "../subscriptions/index.ts";

export const MAX_REQUEST_MESSAGE_LENGTH = 1000;
export const MAX_CLIENT_USER_ID_LENGTH = 256;
const MAX_EMAIL_LENGTH = 254;
const MAX_PHONE_INPUT_LENGTH = 64;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** An optional string field; an empty one counts as absent (clients send ""). */
const optionalText = (max: number) =>
  v.optional(
    v.pipe(
      v.string("must be a string"),
      v.maxLength(max, `must be at most ${max} characters`),
      v.transform((text) => (text.trim() === "" ? undefined : text)),
    ),
  );

export const privacyRequestSchema = plainObject({
  subjectPhone: optionalText(MAX_PHONE_INPUT_LENGTH),
  subjectEmail: optionalText(MAX_EMAIL_LENGTH),
  requestMsg: optionalText(MAX_REQUEST_MESSAGE_LENGTH),
  clientUserId: optionalText(MAX_CLIENT_USER_ID_LENGTH),
});

/** A privacy request as callers send it (interface 4.11, 4.12): a phone, an email, or both. */
export interface PrivacyRequestInput {
  subjectPhone?: string;
  subjectEmail?: string;
  requestMsg?: string;
  clientUserId?: string;
}

/**
 * Validates a request body (400 naming the fields): one subject at least, a
 * phone that is a phone, an email that is an email. Answers the phone in E.164
 * and the email in lower case.
 */
export function parsePrivacyRequest(body: unknown): PrivacyRequestInput {
  const input = parseOrThrow(privacyRequestSchema, body, "body");
  if (input.subjectPhone === undefined && input.subjectEmail === undefined) {
    throw invalidFields([
      { path: "subjectPhone", message: "subjectPhone or subjectEmail is required" },
      { path: "subjectEmail", message: "subjectPhone or subjectEmail is required" },
    ]);
  }
  const problems = [];
  const phone = input.subjectPhone === undefined ? undefined : readPhoneNumber(input.subjectPhone);
  if (input.subjectPhone !== undefined && !phone) problems.push({ path: "subjectPhone", message: "is not a phone number (e.g. +19148440001)" });
  const email = input.subjectEmail?.trim().toLowerCase();
  if (email !== undefined && !EMAIL.test(email)) problems.push({ path: "subjectEmail", message: "must be an email address" });
  if (problems.length > 0) throw invalidFields(problems);
  const valid: PrivacyRequestInput = {};
  if (phone) valid.subjectPhone = phone.e164;
  if (email !== undefined) valid.subjectEmail = email;
  if (input.requestMsg !== undefined) valid.requestMsg = input.requestMsg;
  if (input.clientUserId !== undefined) valid.clientUserId = input.clientUserId;
  return valid;
}
