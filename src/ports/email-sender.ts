import { defineToken } from "../kernel/token.ts";

export interface OutboundEmail {
  /** The sender: an address, or `Name <address>`. */
  from: string;
  /** The recipient's address. */
  to: string;
  subject: string;
  /** The plain-text part. */
  text: string;
  /** The HTML part, when there is one. */
  html?: string;
  /**
   * Further header fields, sent as given (`List-Unsubscribe`,
   * `List-Unsubscribe-Post`). Header names the adapter sets itself (From, To,
   * Subject, Message-ID, Date, MIME-Version, Content-*) are not allowed here.
   */
  headers?: Readonly<Record<string, string>>;
  /**
   * Stable per message (the outbox's message id). A sender must not deliver
   * twice for the same key; it also names the message in its `Message-ID`,
   * so a mailbox that receives it twice anyway can tell.
   */
  idempotencyKey: string;
}

export interface SentEmail {
  /** The id the provider gave the message (an SMTP adapter: its Message-ID). */
  providerMessageId: string;
}

/**
 * Why a message was not sent. `invalid_address`: the address cannot receive
 * mail (malformed, or refused by the server); `rejected`: the server refused
 * the message itself; `unavailable`: the server could not be reached or
 * failed for now; `rate_limited`: it asked to slow down.
 */
export type EmailErrorKind = "invalid_address" | "rejected" | "unavailable" | "rate_limited";

export interface EmailSendErrorOptions {
  /** Whether the outbox tries again (default: for `unavailable` and `rate_limited`). */
  retryable?: boolean;
  /** The server's own code (an SMTP reply code such as 550). */
  providerCode?: string;
  /**
   * The message may have been taken although the answer was lost (the
   * connection broke after the message was handed over). Default false.
   */
  mayHaveSent?: boolean;
}

/** A typed failure of the email provider; `retryable` decides whether the outbox tries again. */
export class EmailSendError extends Error {
  readonly retryable: boolean;
  readonly providerCode: string | undefined;
  readonly mayHaveSent: boolean;

  constructor(
    readonly kind: EmailErrorKind,
    message: string,
    options: EmailSendErrorOptions = {},
  ) {
    super(message);
    this.name = "EmailSendError";
    this.retryable = options.retryable ?? (kind === "unavailable" || kind === "rate_limited");
    this.providerCode = options.providerCode;
    this.mayHaveSent = options.mayHaveSent ?? false;
  }
}

/** The EmailSender port: sends one email; every outbound email goes through the outbox to it. */
export interface EmailSender {
  readonly name: string;
  send(message: OutboundEmail): Promise<SentEmail>;
  /** Closes pooled connections (the kit calls it when it stops). */
  close?(): Promise<void>;
}

/** Header names an {@link OutboundEmail} may not set: the adapter writes them. */
export const RESERVED_EMAIL_HEADERS: ReadonlySet<string> = new Set([
  "from",
  "to",
  "cc",
  "bcc",
  "subject",
  "message-id",
  "date",
  "mime-version",
  "content-type",
  "content-transfer-encoding",
]);

/** A bare address as RFC 5321 takes it in an envelope: local part, @, a dotted domain, no spaces or angle brackets. */
const ADDRESS = /^[^\s@<>()",;:\\[\]]+@[^\s@<>()",;:\\[\]]+\.[^\s@<>()",;:\\[\]]+$/;

/** Whether `address` is a bare email address an adapter can put in an envelope. */
export function isEmailAddress(address: string): boolean {
  return address.length <= 254 && ADDRESS.test(address);
}

export const EMAIL_SENDER = defineToken<EmailSender>("EmailSender", [
  "reachkit/adapters/email/memory (memoryEmail)",
  "reachkit/adapters/email/console (consoleEmail)",
  "reachkit/adapters/email/smtp (smtpEmail)",
]);
