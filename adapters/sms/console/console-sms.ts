import { randomUUID } from "node:crypto";
import { SmsSendError, type OutboundSms, type SentSms, type SmsSender } from "../../../src/index.ts";

export interface ConsoleSmsOptions {
  /** Where each message is written, one JSON line each; defaults to standard output. */
  write?: (line: string) => void;
}

/** Prints every message instead of sending it: the self-hosted default until a provider is configured. */
export function consoleSms(options: ConsoleSmsOptions = {}): SmsSender {
  const write = options.write ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const seen = new Map<string, string>();
  return {
    name: "console",
    async send(message: OutboundSms): Promise<SentSms> {
      const previous = seen.get(message.idempotencyKey);
      if (previous) return { providerMessageId: previous };
      // What an earlier process printed is gone with it: printing again could show the text twice.
      if (message.earlierAttemptAt !== undefined) throw new SmsSendError("in_doubt", "the process that was printing this text stopped; it is not printed again");
      const providerMessageId = `console-${randomUUID()}`;
      seen.set(message.idempotencyKey, providerMessageId);
      write(JSON.stringify({ sms: { ...message, providerMessageId } }));
      return { providerMessageId };
    },
  };
}
