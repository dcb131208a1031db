import type { Company } from "../auth/accounts.ts";
import { RESERVED_EMAIL_HEADERS } from "../ports/email-sender.ts";
import type { OutboxMessage } from "./outbox-record.ts";

export interface OutboundEmailMessage {
  companyId: string;
  /** The recipient's address. */
  to: string;
  subject: string;
  /** The plain-text part. */
  text: string;
  html?: string;
  /** Further header fields (List-Unsubscribe...); the adapter writes From, To, Subject, Message-ID and the MIME ones. */
  headers?: Record<string, string>;
  kind: string;
  /** As for a text: sending again with the same key returns the first message. */
  idempotencyKey?: string;
  tags?: Record<string, string>;
}

/**
 * The email's own fields of its outbox record, from `emailFrom` under the
 * company's name. Throws a TypeError, before anything is stored, for a header
 * the adapter writes itself or a value that would start a header of its own.
 */
export function emailRecordFields(
  message: OutboundEmailMessage,
  emailFrom: string,
): (company: Company | undefined) => Pick<OutboxMessage, "channel" | "to" | "from" | "subject" | "body" | "html" | "headers"> {
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    if (RESERVED_EMAIL_HEADERS.has(name.toLowerCase()) || !/^[!-9;-~]+$/.test(name)) throw new TypeError(`an email may not set the header "${name}"`);
    // A line break would start a header of the value's choosing.
    if (/[\r\n]/.test(value)) throw new TypeError(`the header "${name}" holds a line break`);
  }
  return (company) => ({
    channel: "email",
    to: message.to,
    from: company ? `${quotedName(company.name)} <${emailFrom}>` : emailFrom,
    subject: message.subject,
    body: message.text,
    ...(message.html !== undefined ? { html: message.html } : {}),
    ...(message.headers ? { headers: message.headers } : {}),
  });
}

/** A display name as RFC 5322 takes it: quoted, with quotes and backslashes escaped, line breaks dropped. */
function quotedName(name: string): string {
  return `"${name.replace(/[\r\n]+/g, " ").replace(/(["\\])/g, "\\$1")}"`;
}
