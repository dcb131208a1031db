import { createHash } from "node:crypto";
import type { Transporter } from "nodemailer";
import { EmailSendError, isEmailAddress, type EmailSender, type OutboundEmail, type SentEmail } from "../../../src/index.ts";
import { RecentSends } from "../shared/recent-sends.ts";

export interface SmtpEmailOptions {
  /**
   * `smtp://user:password@host:port` (the connection is upgraded with
   * STARTTLS) or `smtps://user:password@host:port` (TLS from the first byte).
   * User and password are URL-encoded.
   */
  url: string;
  /**
   * Refuse to send over `smtp://` when the server offers no STARTTLS
   * (default true: credentials and messages never cross the network in
   * clear). Set false only for a server on the same host.
   */
  requireTls?: boolean;
  /** Trusted certificates for the server's (a private CA, a self-signed certificate), PEM. Default: Node's. */
  ca?: string | Buffer;
  /** Connections kept open to the server (default 5). */
  maxConnections?: number;
  /** Messages sent over one connection before it is renewed (default 100). */
  maxMessages?: number;
  /** How long to wait for the connection, the greeting and each reply (default 30 s). */
  timeoutMs?: number;
}

/** nodemailer's failure: its code, the SMTP reply code and the command that drew it. */
interface SmtpFailure extends Error {
  code?: string;
  responseCode?: number;
  command?: string;
}

/**
 * Email over SMTP with nodemailer's pooled transport: up to
 * `maxConnections` connections stay open and carry the messages in turn.
 * The message id (the outbox's) names the message in its `Message-ID`.
 * nodemailer is loaded at the first email, not at start-up (about 50 ms of
 * CPU that every start and CLI call would pay).
 */
export function smtpEmail(options: SmtpEmailOptions): EmailSender {
  const url = new URL(options.url);
  if (url.protocol !== "smtp:" && url.protocol !== "smtps:") throw new TypeError(`smtpEmail: the URL must start with smtp:// or smtps://, got ${url.protocol}//`);
  const secure = url.protocol === "smtps:";
  const timeout = options.timeoutMs ?? 30_000;
  const transportOptions = {
    pool: true as const,
    host: url.hostname.replace(/^\[|\]$/g, ""),
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    requireTLS: !secure && (options.requireTls ?? true),
    ...(url.username ? { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } } : {}),
    maxConnections: options.maxConnections ?? 5,
    maxMessages: options.maxMessages ?? 100,
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
    ...(options.ca !== undefined ? { tls: { ca: options.ca } } : {}),
  };
  let transport: Promise<Transporter> | undefined;
  const connect = () => (transport ??= import("nodemailer").then(({ default: nodemailer }) => nodemailer.createTransport(transportOptions)));
  const recent = new RecentSends();

  return {
    name: "smtp",
    async send(message: OutboundEmail): Promise<SentEmail> {
      const previous = recent.get(message.idempotencyKey);
      if (previous) return { providerMessageId: previous };
      if (!isEmailAddress(message.to)) throw new EmailSendError("invalid_address", `not an email address: ${message.to}`);
      const messageId = messageIdOf(message);
      try {
        await (await connect()).sendMail({
          from: message.from,
          to: message.to,
          subject: message.subject,
          text: message.text,
          ...(message.html !== undefined ? { html: message.html } : {}),
          messageId,
          ...(message.headers ? { headers: { ...message.headers } } : {}),
        });
      } catch (error) {
        throw sendError(error as SmtpFailure);
      }
      recent.remember(message.idempotencyKey, messageId);
      return { providerMessageId: messageId };
    },
    async close() {
      if (transport) (await transport).close();
    },
  };
}

/** `<key@domain of the sender>`: the same message gets the same Message-ID on every attempt. */
function messageIdOf(message: OutboundEmail): string {
  const domain = /@([^\s@>]+)>?\s*$/.exec(message.from)?.[1] ?? "reachkit.invalid";
  const key = /^[\w.-]{1,100}$/.test(message.idempotencyKey) ? message.idempotencyKey : createHash("sha256").update(message.idempotencyKey).digest("hex");
  return `<${key}@${domain}>`;
}

/** The server's answer as a typed failure: a refused recipient is for good, a 4xx reply or a broken connection is for now. */
function sendError(error: SmtpFailure): EmailSendError {
  const code = error.responseCode;
  const detail = error.message;
  const providerCode = code === undefined ? error.code : String(code);
  if (error.code === "EENVELOPE" && code !== undefined && code >= 500) {
    return new EmailSendError("invalid_address", `the server refused the recipient: ${detail}`, { providerCode });
  }
  if (code === 421 || code === 450 || code === 451 || code === 452) {
    return new EmailSendError(code === 421 || code === 450 ? "rate_limited" : "unavailable", `the server deferred the message: ${detail}`, { providerCode });
  }
  // Authentication and TLS failures are the connection's, not the message's: it waits for the operator's fix.
  if (code !== undefined && code >= 500 && error.code !== "EAUTH" && error.code !== "ETLS") {
    return new EmailSendError("rejected", `the server refused the message: ${detail}`, { providerCode });
  }
  // No reply to the end of the message: the server may have taken it.
  const afterData = code === undefined && /^DATA|^\.$/.test(error.command ?? "");
  return new EmailSendError("unavailable", `the SMTP server failed: ${detail}`, { providerCode, mayHaveSent: afterData });
}
