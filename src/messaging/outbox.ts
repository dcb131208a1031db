import PQueue from "p-queue";
import type { Accounts, Company } from "../auth/accounts.ts";
import { sortableId } from "../kernel/ids.ts";
import { defineToken } from "../kernel/token.ts";
import type { JobContext, JobOutcome } from "../jobs/job-runner.ts";
import type { Jobs } from "../jobs/jobs.ts";
import type { Clock } from "../ports/clock.ts";
import { EmailSendError, RESERVED_EMAIL_HEADERS, type EmailSender } from "../ports/email-sender.ts";
import type { Logger } from "../ports/logger.ts";
import { SmsSendError, type SmsSender } from "../ports/sms-sender.ts";
import type { Collection, Storage, Where } from "../ports/storage.ts";
import { OUTBOX_COLLECTION, type OutboxMessage, type OutboxStatus } from "./outbox-record.ts";

export interface MessagingSettings {
  /** Messages per second per sender number. `Infinity` lifts the limit. */
  ratePerSecond: number;
  /** The sender of companies that have none set. */
  defaultSender: string;
  /** The same body to the same number within this window is suppressed when the caller asks for it. */
  duplicateWindowMs: number;
  /** The address emails come from; the company's name is shown beside it. */
  emailFrom: string;
}

export const DEFAULT_MESSAGING_SETTINGS: MessagingSettings = {
  ratePerSecond: 10,
  defaultSender: "+15550000000",
  duplicateWindowMs: 5 * 60_000,
  emailFrom: "no-reply@reachkit.invalid",
};

export interface OutboundMessage {
  companyId: string;
  /** E.164. */
  to: string;
  /** The text exactly as it must be sent (any prefix already applied). */
  body: string;
  mediaUrl?: string;
  kind: string;
  /**
   * Stable per logical message: sending again with the same key returns the
   * first message instead of a second SMS (job handlers re-run; this makes them safe).
   */
  idempotencyKey?: string;
  /** Suppress (status `suppressed`) if the same body went to the same number within the duplicate window. */
  suppressDuplicates?: boolean;
  tags?: Record<string, string>;
}

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

export interface OutboxListOptions {
  companyId?: string;
  to?: string;
  limit?: number;
}

export const OUTBOX_SEND_JOB = "reachkit.outbox.send";

/**
 * Every outbound SMS and email goes through here: persisted first, then sent
 * by a durable job through the SmsSender or EmailSender port (texts at most
 * `ratePerSecond` per sender number), with the message id as the provider's
 * idempotency key so a crash between send and commit never sends twice.
 */
export class Outbox {
  readonly #messages: Collection<OutboxMessage>;
  readonly #limiters = new Map<string, PQueue>();
  /** Settles when the delivery started last has handed its text to its sender's queue (or given up). */
  #lastHandOff: Promise<void> = Promise.resolve();

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly jobs: Jobs,
    private readonly sms: () => SmsSender | undefined,
    private readonly email: () => EmailSender | undefined,
    private readonly accounts: () => Accounts | undefined,
    private readonly logger: Logger,
    private readonly settings: MessagingSettings,
    /** Told each time a message reaches a status (the metrics count them). */
    private readonly reached: (status: OutboxStatus) => void = () => undefined,
  ) {
    this.#messages = storage.collection(OUTBOX_COLLECTION);
  }

  /** Records a text and queues its delivery. Returns the stored message (maybe suppressed, maybe an earlier one). */
  async send(message: OutboundMessage): Promise<OutboxMessage> {
    return this.#record(message, message.suppressDuplicates ?? false, (id, now, company) => ({
      ...queuedRecord(id, now, message),
      to: message.to,
      from: company?.senderNumber ?? this.settings.defaultSender,
      body: message.body,
      ...(message.mediaUrl !== undefined ? { mediaUrl: message.mediaUrl } : {}),
    }));
  }

  /**
   * Records an email and queues its delivery, from `emailFrom` under the
   * company's name. Returns the stored message (maybe an earlier one with the same key).
   */
  async sendEmail(message: OutboundEmailMessage): Promise<OutboxMessage> {
    for (const [name, value] of Object.entries(message.headers ?? {})) {
      if (RESERVED_EMAIL_HEADERS.has(name.toLowerCase()) || !/^[!-9;-~]+$/.test(name)) throw new TypeError(`an email may not set the header "${name}"`);
      // A line break would start a header of the value's choosing.
      if (/[\r\n]/.test(value)) throw new TypeError(`the header "${name}" holds a line break`);
    }
    return this.#record(message, false, (id, now, company) => ({
      ...queuedRecord(id, now, message),
      channel: "email",
      to: message.to,
      from: company ? `${quotedName(company.name)} <${this.settings.emailFrom}>` : this.settings.emailFrom,
      subject: message.subject,
      body: message.text,
      ...(message.html !== undefined ? { html: message.html } : {}),
      ...(message.headers ? { headers: message.headers } : {}),
    }));
  }

  async #record(
    message: { companyId: string; idempotencyKey?: string },
    suppressDuplicates: boolean,
    build: (id: string, now: number, company: Company | undefined) => OutboxMessage,
  ): Promise<OutboxMessage> {
    const now = this.clock.now();
    let stored: "queued" | "suppressed" | undefined;
    const result = await this.storage.transaction(async () => {
      if (message.idempotencyKey !== undefined) {
        const existing = await this.#messages.findOne({ companyId: message.companyId, idempotencyKey: message.idempotencyKey });
        if (existing) return existing;
      }
      const id = sortableId(now);
      const record = build(id, now, await this.accounts()?.getCompany(message.companyId));
      if (suppressDuplicates && (await this.#isDuplicate(record))) {
        stored = "suppressed";
        return this.#messages.insert({ ...record, status: "suppressed", reason: "duplicate: the same message went to this number recently" });
      }
      await this.#messages.insert(record);
      await this.jobs.enqueue({ type: OUTBOX_SEND_JOB, payload: { messageId: id }, key: `outbox:${id}`, companyId: message.companyId });
      stored = "queued";
      return record;
    });
    // Counted once committed: the caller's transaction, when there is one, is not known here.
    if (stored) this.reached(stored);
    return result;
  }

  async get(id: string): Promise<OutboxMessage | undefined> {
    return this.#messages.get(id);
  }

  /** Messages oldest first (newest last), optionally for one company and/or one recipient. */
  async list(options: OutboxListOptions = {}): Promise<OutboxMessage[]> {
    const where: Where<OutboxMessage> = {};
    if (options.companyId) where.companyId = options.companyId;
    if (options.to) where.to = options.to;
    const limit = options.limit ?? 1000;
    // Ids sort in creation order, so the newest `limit` are the first of a descending id scan.
    const page = await this.#messages.find({ where, orderBy: [{ field: "id", direction: "desc" }], limit });
    return page.items.reverse();
  }

  /** Deletes every message of a company to one number, bodies included (privacy requests). */
  deleteForRecipient(companyId: string, to: string): Promise<number> {
    return this.#messages.deleteWhere({ companyId, to });
  }

  /** The job handler that delivers one message. */
  async deliver(payload: { messageId: string }, context: JobContext): Promise<JobOutcome | undefined> {
    // Deliveries hand their texts to the senders' queues in the order they started, which is the order
    // their jobs were claimed (due time, then creation): a booking confirmation queued before a
    // cancellation is sent before it, even when the storage's round trips finish out of order.
    const previousHandOff = this.#lastHandOff;
    let handOff!: () => void;
    const ownHandOff = new Promise<void>((resolve) => (handOff = resolve));
    // A delivery that ends without sending still passes the turn on only after the ones before it.
    this.#lastHandOff = previousHandOff.then(() => ownHandOff);
    try {
      return await this.#deliver(payload, context, { previous: previousHandOff, handedOff: handOff });
    } finally {
      handOff();
    }
  }

  async #deliver(payload: { messageId: string }, context: JobContext, turn: { previous: Promise<void>; handedOff: () => void }): Promise<JobOutcome | undefined> {
    const message = await this.#messages.get(payload.messageId);
    if (!message || message.status !== "queued") return; // already handled by an earlier run
    if (message.channel === "email") {
      // Emails keep no order with texts: the texts after this one need not wait for it.
      turn.handedOff();
      return this.#deliverEmail(message, context);
    }
    const sender = this.sms();
    if (!sender) return this.#fail(message, "no SmsSender adapter is configured");
    await this.#messages.update(message.id, { attempts: message.attempts + 1, updatedAt: this.clock.now() });
    try {
      await turn.previous;
      const sending = this.#limiter(message.from).add(() =>
        sender.send({
          from: message.from,
          to: message.to,
          body: message.body,
          ...(message.mediaUrl !== undefined ? { mediaUrl: message.mediaUrl } : {}),
          idempotencyKey: message.id,
        }),
      );
      turn.handedOff();
      const sent = await sending;
      const now = this.clock.now();
      await this.#messages.update(message.id, { status: "sent", providerMessageId: sent?.providerMessageId, sentAt: now, updatedAt: now });
      this.reached("sent");
      return { messageId: message.id, status: "sent" };
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const retryable = !(error instanceof SmsSendError) || error.retryable;
      if (!retryable || context.attempt >= context.job.maxAttempts) return this.#fail(message, reason);
      context.logger.warn("sending failed; will retry", { messageId: message.id, reason });
      throw error;
    }
  }

  async #deliverEmail(message: OutboxMessage, context: JobContext): Promise<JobOutcome | undefined> {
    const sender = this.email();
    if (!sender) return this.#fail(message, "no EmailSender adapter is configured");
    if (message.inFlightSince !== undefined) {
      return this.#fail(message, "in doubt: an earlier attempt may have handed this email over before the process stopped; not sent again, so that it is never sent twice");
    }
    // Committed before the email leaves: should the process die before the outcome is recorded, the next attempt knows.
    await this.#messages.update(message.id, { attempts: message.attempts + 1, inFlightSince: this.clock.now(), updatedAt: this.clock.now() });
    try {
      const sent = await sender.send({
        from: message.from,
        to: message.to,
        subject: message.subject ?? "",
        text: message.body,
        ...(message.html !== undefined ? { html: message.html } : {}),
        ...(message.headers ? { headers: message.headers } : {}),
        idempotencyKey: message.id,
      });
      const now = this.clock.now();
      await this.#messages.update(message.id, { status: "sent", providerMessageId: sent.providerMessageId, sentAt: now, updatedAt: now, inFlightSince: undefined });
      this.reached("sent");
      return { messageId: message.id, status: "sent" };
    } catch (error) {
      const failure = error instanceof EmailSendError ? error : undefined;
      const reason = error instanceof Error ? error.message : String(error);
      // An error the adapter does not explain may have come after the message left.
      if (failure && !failure.mayHaveSent) await this.#messages.update(message.id, { inFlightSince: undefined, updatedAt: this.clock.now() });
      const retryable = failure?.retryable ?? true;
      if (!retryable || context.attempt >= context.job.maxAttempts) return this.#fail(message, reason);
      context.logger.warn("sending failed; will retry", { messageId: message.id, reason });
      throw error;
    }
  }

  async #fail(message: OutboxMessage, reason: string): Promise<JobOutcome> {
    this.logger.warn("message not sent", { messageId: message.id, companyId: message.companyId, reason });
    await this.#messages.update(message.id, { status: "failed", reason, updatedAt: this.clock.now(), inFlightSince: undefined });
    this.reached("failed");
    return { messageId: message.id, status: "failed" };
  }

  async #isDuplicate(record: OutboxMessage): Promise<boolean> {
    const recent = await this.#messages.find({
      where: { companyId: record.companyId, to: record.to, createdAt: { gte: record.createdAt - this.settings.duplicateWindowMs } },
    });
    return recent.items.some((other) => other.body === record.body && (other.status === "queued" || other.status === "sent"));
  }

  #limiter(from: string): PQueue {
    let limiter = this.#limiters.get(from);
    if (!limiter) {
      const rate = this.settings.ratePerSecond;
      // Strict: a sliding window, so no second ever holds more than `rate` sends (a fixed window lets two bursts meet at its edge).
      limiter = Number.isFinite(rate) ? new PQueue({ intervalCap: rate, interval: 1000, strict: true }) : new PQueue();
      this.#limiters.set(from, limiter);
    }
    return limiter;
  }
}

/** What every new message holds, whatever its channel: queued, not tried yet. */
function queuedRecord(
  id: string,
  now: number,
  message: { companyId: string; kind: string; idempotencyKey?: string; tags?: Record<string, string> },
): Omit<OutboxMessage, "to" | "from" | "body"> {
  return {
    id,
    companyId: message.companyId,
    kind: message.kind,
    status: "queued",
    idempotencyKey: message.idempotencyKey ?? id,
    ...(message.tags ? { tags: message.tags } : {}),
    attempts: 0,
    createdAt: now,
    updatedAt: now,
  };
}

/** A display name as RFC 5322 takes it: quoted, with quotes and backslashes escaped, line breaks dropped. */
function quotedName(name: string): string {
  return `"${name.replace(/[\r\n]+/g, " ").replace(/(["\\])/g, "\\$1")}"`;
}

export const OUTBOX = defineToken<Outbox>("Outbox", ["reachkit core (always bound)"]);
