import { randomUUID } from "node:crypto";
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import type { OutboundSms, SentSms, SmsSender } from "../../../src/index.ts";

export interface FileSmsOptions {
  /** The file every message is appended to, one JSON line `{"sms": {...}}` each; created when missing. */
  path: string;
}

/**
 * Appends every message to a file instead of sending it: a durable sent log
 * that survives a crash of the process (a test or an operator reads what went
 * out). Like a provider that honours idempotency keys, a key already in the
 * file (from this run or an earlier one) is not sent again.
 */
export function fileSms(options: FileSmsOptions): SmsSender {
  const sent = new Map<string, string>();
  if (existsSync(options.path)) {
    const text = readFileSync(options.path, "utf8");
    // Ends the line a crash cut short, so the next message starts a line of its own.
    if (text !== "" && !text.endsWith("\n")) appendFileSync(options.path, "\n");
    for (const line of text.split("\n")) {
      // A line cut short by a crash mid-write was never sent whole: it does not count.
      const entry = parseLine(line);
      if (entry) sent.set(entry.idempotencyKey, entry.providerMessageId);
    }
  }
  return {
    name: "file",
    async send(message: OutboundSms): Promise<SentSms> {
      const previous = sent.get(message.idempotencyKey);
      if (previous) return { providerMessageId: previous };
      const providerMessageId = `file-${randomUUID()}`;
      // Synchronous: once send returns, the line is in the file, whatever happens to the process next.
      appendFileSync(options.path, `${JSON.stringify({ sms: { ...message, providerMessageId, sentAt: new Date().toISOString() } })}\n`);
      sent.set(message.idempotencyKey, providerMessageId);
      return { providerMessageId };
    },
  };
}

function parseLine(line: string): { idempotencyKey: string; providerMessageId: string } | undefined {
  try {
    const { sms } = JSON.parse(line) as { sms?: { idempotencyKey?: unknown; providerMessageId?: unknown } };
    if (typeof sms?.idempotencyKey === "string" && typeof sms.providerMessageId === "string") {
      return { idempotencyKey: sms.idempotencyKey, providerMessageId: sms.providerMessageId };
    }
  } catch {
    // not a complete line
  }
  return undefined;
}
