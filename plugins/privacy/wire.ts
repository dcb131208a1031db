import type { PrivacyRequest } from "./records.ts";

/**
 * The reference's timestamp shape: `2020-09-02T17:44:23.875+0000` (milliseconds,
 * UTC written as a +0000 offset).
 */
export function formatTimestamp(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/Z$/, "+0000");
}

/** `+*****0001`: the last four digits only, behind a fixed mask that hides the length too. */
export function maskPhone(phone: string): string {
  return `+*****${phone.replace(/\D/g, "").slice(-4)}`;
}

/** `a**@example.com`: the first character of the local part and the domain. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf("@");
  if (at <= 0) return "***";
  return `${email[0]}**${email.slice(at)}`;
}

/** What the v1 create answers (interface 4.12), the subject as given. */
export function createdView(request: PrivacyRequest): Record<string, unknown> {
  return {
    id: request.id,
    processed: request.processed,
    type: request.type,
    ...subjectOf(request),
    ...(request.requestMsg !== undefined ? { requestMsg: request.requestMsg } : {}),
    requestDateTime: formatTimestamp(request.requestedAt),
  };
}

/** What the v1 fetch answers: every field of interface 2.5, the subject masked, processing times once processed. */
export function fetchedView(request: PrivacyRequest): Record<string, unknown> {
  return {
    id: request.id,
    processed: request.processed,
    type: request.type,
    ...(request.subjectPhone !== undefined ? { subjectPhone: request.processed ? request.subjectPhone : maskPhone(request.subjectPhone) } : {}),
    ...(request.subjectEmail !== undefined ? { subjectEmail: request.processed ? request.subjectEmail : maskEmail(request.subjectEmail) } : {}),
    ...(request.requestMsg !== undefined ? { requestMsg: request.requestMsg } : {}),
    requestDateTime: formatTimestamp(request.requestedAt),
    ...(request.processingStartedAt !== undefined ? { processingStartDateTime: formatTimestamp(request.processingStartedAt) } : {}),
    ...(request.processingEndedAt !== undefined ? { processingEndDateTime: formatTimestamp(request.processingEndedAt) } : {}),
  };
}

/** The legacy answer (interface 4.11, 2.5): integer ids, and the phone under the lower-case key `subjectphone`. */
export function legacyView(request: PrivacyRequest, affiliateUserId: number): Record<string, unknown> {
  return {
    id: request.number,
    affiliateUserId,
    processed: request.processed,
    type: request.type,
    ...(request.subjectPhone !== undefined ? { subjectphone: request.subjectPhone } : {}),
    ...(request.subjectEmail !== undefined ? { subjectEmail: request.subjectEmail } : {}),
    ...(request.requestMsg !== undefined ? { requestMsg: request.requestMsg } : {}),
    requestDateTime: formatTimestamp(request.requestedAt),
  };
}

function subjectOf(request: PrivacyRequest): Record<string, string> {
  return {
    ...(request.subjectPhone !== undefined ? { subjectPhone: request.subjectPhone } : {}),
    ...(request.subjectEmail !== undefined ? { subjectEmail: request.subjectEmail } : {}),
  };
}
