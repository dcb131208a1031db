import { defineToken } from "../kernel/token.ts";

export interface OutboundSms {
  /** The sender number of the company (E.164 or short code). */
  from: string;
  /** E.164 recipient. */
  to: string;
  body: string;
  /** Set for MMS. */
  mediaUrl?: string;
  /**
   * Stable per message. A sender must not deliver twice for the same key
   * (providers that support idempotency receive it; others dedupe locally), so
   * a crash between send and commit never sends twice.
   */
  idempotencyKey: string;
}

export interface SentSms {
  providerMessageId: string;
}

/** A message arriving from a subscriber (provider webhook or test delivery). */
export interface InboundSms {
  from: string;
  to: string;
  body: string;
}

/** The request as the webhook route received it, for provider signature checks. */
export interface InboundWebhookRequest {
  /** The full public URL the provider called. */
  url: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The form fields of the body. */
  params: Readonly<Record<string, string>>;
}

export type SmsErrorKind = "invalid_number" | "rate_limited" | "unavailable" | "rejected";

/** A typed failure of the provider; `retryable` decides whether the outbox tries again. */
export class SmsSendError extends Error {
  constructor(
    readonly kind: SmsErrorKind,
    message: string,
    readonly retryable = kind === "rate_limited" || kind === "unavailable",
  ) {
    super(message);
    this.name = "SmsSendError";
  }
}

export interface SmsSender {
  readonly name: string;
  send(message: OutboundSms): Promise<SentSms>;
  /**
   * Checks a provider's webhook signature. When present and it returns true the
   * request is trusted; when absent, the webhook path's secret token is required.
   */
  verifyInbound?(request: InboundWebhookRequest): boolean;
  /** For adapters that receive messages themselves (the memory adapter in tests). */
  onInbound?(handler: (message: InboundSms) => Promise<void>): void;
}

export const SMS_SENDER = defineToken<SmsSender>("SmsSender", [
  "reachkit/adapters/sms/memory (memorySms)",
  "reachkit/adapters/sms/console (consoleSms)",
  "reachkit/adapters/sms/file (fileSms)",
]);
