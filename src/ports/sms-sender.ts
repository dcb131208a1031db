import type { AnyRoute } from "../http/route.ts";
import { defineToken } from "../kernel/token.ts";
import type { DeliveryReceipt } from "../messaging/delivery-status.ts";

export interface OutboundSms {
  /** The sender number of the company (E.164 or short code). */
  from: string;
  /** E.164 recipient. */
  to: string;
  body: string;
  /** Set for MMS. */
  mediaUrl?: string;
  /**
   * Stable per message (the outbox's message id). A sender must not deliver
   * twice for the same key: a provider that keeps idempotency keys receives
   * it; others dedupe in the adapter and answer `earlierAttemptAt` as it says.
   * Receipts carry it back (`DeliveryReceipt.messageId`) when the provider can.
   */
  idempotencyKey: string;
  /**
   * Set when an earlier attempt with this key may have reached the provider
   * without its outcome being recorded (the process was killed, or the
   * connection broke after the request left): when that attempt started.
   * The adapter must then find out whether the provider took the message and
   * return it, or throw an {@link SmsSendError} of kind `in_doubt`; it never
   * sends blindly, so a crash between send and commit never sends twice.
   */
  earlierAttemptAt?: number;
}

export interface SentSms {
  providerMessageId: string;
}

/** A message arriving from a subscriber (provider webhook, SMPP deliver_sm, or test delivery). */
export interface InboundSms {
  from: string;
  to: string;
  body: string;
  /** The provider's id for it; a provider delivering it twice gets one answer. */
  messageId?: string;
}

/** The request as the webhook route received it, for provider signature checks. */
export interface InboundWebhookRequest {
  /** The full public URL the provider called. */
  url: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The form fields of the body. */
  params: Readonly<Record<string, string>>;
}

/**
 * Why a provider refused a message. `opted_out`: the recipient opted out at
 * the carrier (the provider will refuse every text to them); `in_doubt`: an
 * earlier attempt may have been sent and the provider cannot tell.
 */
export type SmsErrorKind = "invalid_number" | "opted_out" | "rate_limited" | "unavailable" | "rejected" | "in_doubt";

export interface SmsSendErrorOptions {
  /** Whether the outbox tries again (default: for `rate_limited` and `unavailable`). */
  retryable?: boolean;
  /** The provider's own error code (Twilio's 21610, an SMPP command_status). */
  providerCode?: string;
  /**
   * The request may have reached the provider (a timeout, a connection that
   * broke after the request left): the next attempt passes `earlierAttemptAt`.
   * Default false: the provider answered, and did not take the message.
   */
  mayHaveSent?: boolean;
}

/** A typed failure of the provider; `retryable` decides whether the outbox tries again. */
export class SmsSendError extends Error {
  readonly retryable: boolean;
  readonly providerCode: string | undefined;
  readonly mayHaveSent: boolean;

  constructor(
    readonly kind: SmsErrorKind,
    message: string,
    options: SmsSendErrorOptions = {},
  ) {
    super(message);
    this.name = "SmsSendError";
    this.retryable = options.retryable ?? (kind === "rate_limited" || kind === "unavailable");
    this.providerCode = options.providerCode;
    this.mayHaveSent = options.mayHaveSent ?? false;
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
  /** For adapters that receive messages themselves (SMPP's deliver_sm, the memory adapter in tests). */
  onInbound?(handler: (message: InboundSms) => Promise<void>): void;
  /** Delivery receipts the provider reports (status callbacks, SMPP receipts); the kit records them in the outbox. */
  onReceipt?(handler: (receipt: DeliveryReceipt) => Promise<void>): void;
  /**
   * True when each of its receipts carries the message's id (`DeliveryReceipt.messageId`), as Twilio's
   * status callbacks do in their URL: the outbox then stores no receipt key for its texts (an index entry
   * per text that no receipt would read). Without it, a receipt may find its message by the provider's id.
   */
  readonly receiptsCarryMessageId?: boolean;
  /** Routes the adapter serves on the kit (a status callback); the kit adds them to its route table. */
  routes?(): AnyRoute[];
  /** Opens connections the adapter keeps (an SMPP bind); called when the kit starts. */
  start?(): Promise<void>;
  /** Closes them; called when the kit stops. */
  stop?(): Promise<void>;
}

export const SMS_SENDER = defineToken<SmsSender>("SmsSender", [
  "reachkit/adapters/sms/memory (memorySms)",
  "reachkit/adapters/sms/console (consoleSms)",
  "reachkit/adapters/sms/file (fileSms)",
  "reachkit/adapters/sms/twilio (twilioSms)",
  "reachkit/adapters/sms/smpp (smppSms)",
]);
