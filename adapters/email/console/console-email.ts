import { randomUUID } from "node:crypto";
import { EmailSendError, isEmailAddress, type EmailSender, type OutboundEmail, type SentEmail } from "../../../src/index.ts";
import { RecentSends } from "../shared/recent-sends.ts";

export interface ConsoleEmailOptions {
  /** Where each message is written, one JSON line each; defaults to standard output. */
  write?: (line: string) => void;
}

/** Prints every email instead of sending it: the self-hosted default until an SMTP server is configured. */
export function consoleEmail(options: ConsoleEmailOptions = {}): EmailSender {
  const write = options.write ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const recent = new RecentSends();
  return {
    name: "console",
    async send(message: OutboundEmail): Promise<SentEmail> {
      const previous = recent.get(message.idempotencyKey);
      if (previous) return { providerMessageId: previous };
      if (!isEmailAddress(message.to)) throw new EmailSendError("invalid_address", `not an email address: ${message.to}`);
      const providerMessageId = `console-${randomUUID()}`;
      recent.remember(message.idempotencyKey, providerMessageId);
      write(JSON.stringify({ email: { ...message, providerMessageId } }));
      return { providerMessageId };
    },
  };
}
