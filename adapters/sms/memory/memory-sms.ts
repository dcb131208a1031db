import { SmsSendError, type DeliveryReceipt, type InboundSms, type OutboundSms, type ReportedStatus, type SentSms, type SmsSender } from "../../../src/index.ts";

export interface DeliveredSms extends OutboundSms {
  providerMessageId: string;
}

/**
 * An SMS provider in memory: what was sent is readable in `sent`, failures can
 * be queued with `failNext`, and `deliverInbound` plays the part of a subscriber
 * texting the company.
 */
export interface MemorySms extends SmsSender {
  readonly sent: readonly DeliveredSms[];
  /** Messages sent to one number, oldest first. */
  sentTo(phone: string): DeliveredSms[];
  /** The next `send` calls fail with these errors, in order. */
  failNext(...errors: SmsSendError[]): void;
  /** Simulates a subscriber's text arriving at the provider. */
  deliverInbound(message: InboundSms): Promise<void>;
  /** Simulates the provider's delivery receipt for a message it took. */
  reportStatus(providerMessageId: string, status: ReportedStatus, errorCode?: string): Promise<void>;
  clear(): void;
}

export function memorySms(): MemorySms {
  const sent: DeliveredSms[] = [];
  const byIdempotencyKey = new Map<string, DeliveredSms>();
  const failures: SmsSendError[] = [];
  let inboundHandler: ((message: InboundSms) => Promise<void>) | undefined;
  let receiptHandler: ((receipt: DeliveryReceipt) => Promise<void>) | undefined;
  let counter = 0;

  return {
    name: "memory",
    sent,
    sentTo: (phone) => sent.filter((message) => message.to === phone),
    failNext: (...errors) => void failures.push(...errors),
    async send(message: OutboundSms): Promise<SentSms> {
      // Providers dedupe by idempotency key; this adapter does the same so tests can prove no double send.
      const previous = byIdempotencyKey.get(message.idempotencyKey);
      if (previous) return { providerMessageId: previous.providerMessageId };
      const failure = failures.shift();
      if (failure) throw failure;
      if (!/^\+[1-9]\d{6,14}$/.test(message.to)) throw new SmsSendError("invalid_number", `not an E.164 number: ${message.to}`);
      const delivered: DeliveredSms = { ...message, providerMessageId: `mem-${++counter}` };
      sent.push(delivered);
      byIdempotencyKey.set(message.idempotencyKey, delivered);
      return { providerMessageId: delivered.providerMessageId };
    },
    onInbound(handler) {
      inboundHandler = handler;
    },
    async deliverInbound(message) {
      if (!inboundHandler) throw new Error("no kit is listening for inbound messages on this memory SMS adapter");
      await inboundHandler(message);
    },
    onReceipt(handler) {
      receiptHandler = handler;
    },
    async reportStatus(providerMessageId, status, errorCode) {
      const message = sent.find((candidate) => candidate.providerMessageId === providerMessageId);
      if (!message) throw new Error(`the memory SMS adapter sent no message ${providerMessageId}`);
      if (!receiptHandler) throw new Error("no kit is listening for receipts on this memory SMS adapter");
      await receiptHandler({ providerMessageId, messageId: message.idempotencyKey, status, ...(errorCode !== undefined ? { errorCode } : {}) });
    },
    clear() {
      sent.length = 0;
      byIdempotencyKey.clear();
      failures.length = 0;
    },
  };
}
