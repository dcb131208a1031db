import { EmailSendError, isEmailAddress, type EmailSender, type OutboundEmail, type SentEmail } from "../../../src/index.ts";

export interface DeliveredEmail extends OutboundEmail {
  providerMessageId: string;
}

export interface MemoryEmailOptions {
  /** Addresses the pretend mail server refuses (as a server answering 550 would). */
  refuses?: (address: string) => boolean;
}

/**
 * An email provider in memory, for tests: what was sent is readable in
 * `sent`, and failures can be queued with `failNext`.
 */
export interface MemoryEmail extends EmailSender {
  readonly sent: readonly DeliveredEmail[];
  /** Messages sent to one address, oldest first. */
  sentTo(address: string): DeliveredEmail[];
  /** The next `send` calls fail with these errors, in order. */
  failNext(...errors: EmailSendError[]): void;
  clear(): void;
}

export function memoryEmail(options: MemoryEmailOptions = {}): MemoryEmail {
  const sent: DeliveredEmail[] = [];
  const byIdempotencyKey = new Map<string, DeliveredEmail>();
  const failures: EmailSendError[] = [];
  let counter = 0;

  return {
    name: "memory",
    sent,
    sentTo: (address) => sent.filter((message) => message.to === address),
    failNext: (...errors) => void failures.push(...errors),
    async send(message: OutboundEmail): Promise<SentEmail> {
      // Real senders never deliver one key twice; this one does the same so tests can prove it.
      const previous = byIdempotencyKey.get(message.idempotencyKey);
      if (previous) return { providerMessageId: previous.providerMessageId };
      const failure = failures.shift();
      if (failure) throw failure;
      if (!isEmailAddress(message.to)) throw new EmailSendError("invalid_address", `not an email address: ${message.to}`);
      if (options.refuses?.(message.to)) throw new EmailSendError("invalid_address", `the server refused ${message.to}`, { providerCode: "550" });
      const delivered: DeliveredEmail = { ...message, providerMessageId: `mem-email-${++counter}` };
      sent.push(delivered);
      byIdempotencyKey.set(message.idempotencyKey, delivered);
      return { providerMessageId: delivered.providerMessageId };
    },
    clear() {
      sent.length = 0;
      byIdempotencyKey.clear();
      failures.length = 0;
    },
  };
}
