import { SmsSendError, type ReportedStatus } from "../../../src/index.ts";

/** Twilio's error codes for a recipient who opted out at the carrier (replied STOP to this sender). */
const OPTED_OUT_CODES = new Set(["21610"]);
/** Numbers Twilio will never deliver to: invalid, not mobile, unreachable by SMS, not a valid "To". */
const INVALID_NUMBER_CODES = new Set(["21211", "21214", "21217", "21401", "21407", "21408", "21421", "21612", "21614"]);

/** What the Twilio library throws for an answer that is not 2xx (its RestException). */
interface RestExceptionLike {
  status: number;
  code?: number;
  message?: string;
}

const isRestException = (error: unknown): error is RestExceptionLike =>
  typeof error === "object" && error !== null && typeof (error as { status?: unknown }).status === "number";

/**
 * A failed create as an {@link SmsSendError}: an opted-out or invalid number
 * fails at once; 429 and 5xx are retried with backoff; another 4xx (a sender
 * not on the account, a body too long) fails at once. A request that got no
 * answer (timeout, broken connection) may have reached Twilio.
 */
export function sendErrorOf(error: unknown): SmsSendError {
  if (!isRestException(error)) {
    const message = error instanceof Error ? error.message : String(error);
    return new SmsSendError("unavailable", `no answer from the Messages API: ${message}`, { mayHaveSent: true });
  }
  const providerCode = error.code === undefined ? undefined : String(error.code);
  const message = `${error.message ?? "refused"} (HTTP ${error.status}${providerCode ? `, error ${providerCode}` : ""})`;
  if (providerCode !== undefined && OPTED_OUT_CODES.has(providerCode)) return new SmsSendError("opted_out", message, { providerCode });
  if (providerCode !== undefined && INVALID_NUMBER_CODES.has(providerCode)) return new SmsSendError("invalid_number", message, { providerCode });
  if (error.status === 429) return new SmsSendError("rate_limited", message, { providerCode });
  // A 5xx may come from a proxy after Twilio took the message: the next attempt asks first.
  if (error.status >= 500) return new SmsSendError("unavailable", message, { providerCode, mayHaveSent: true });
  return new SmsSendError("rejected", message, { providerCode });
}

/**
 * A status callback's MessageStatus as a delivery status; undefined for the
 * steps before the carrier (accepted, queued, sending), which change nothing
 * the outbox shows: it marks a message sent when Twilio takes it.
 */
export function reportedStatusOf(messageStatus: string): ReportedStatus | undefined {
  switch (messageStatus) {
    case "sent":
      return "sent";
    case "delivered":
    case "read":
      return "delivered";
    case "undelivered":
      return "undelivered";
    case "failed":
    case "canceled":
      return "failed";
    default:
      return undefined;
  }
}

export const isOptedOutCode = (code: string | undefined): boolean => code !== undefined && OPTED_OUT_CODES.has(code);
