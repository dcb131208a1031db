import PQueue from "p-queue";
import type { Accounts } from "../auth/accounts.ts";
import { sortableId } from "../kernel/ids.ts";
import { defineToken } from "../kernel/token.ts";
import type { JobContext, JobOutcome } from "../jobs/job-runner.ts";
import type { Jobs } from "../jobs/jobs.ts";
import type { Clock } from "../ports/clock.ts";
import type { Logger } from "../ports/logger.ts";
import { SmsSendError, type SmsSender } from "../ports/sms-sender.ts";
import type { Collection, Page, Storage, Where } from "../ports/storage.ts";
import { OUTBOX_COLLECTION, OUTBOX_STATUSES, type OutboxMessage, type OutboxStatus } from "./outbox-record.ts";

export interface MessagingSettings {
  /** Messages per second per sender number. `Infinity` lifts the limit. */
  ratePerSecond: number;
  /** The sender of companies that have none set. */
  defaultSender: string;
  /** The same body to the same number within this window is suppressed when the caller asks for it. */
  duplicateWindowMs: number;
}

export const DEFAULT_MESSAGING_SETTINGS: MessagingSettings = {
  ratePerSecond: 10,
  defaultSender: "+15550000000",
  duplicateWindowMs: 5 * 60_000,
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

export interface OutboxListOptions {
  companyId?: string;
  to?: string;
  limit?: number;
}

/** What one page of a company's messages is drawn from. */
export interface OutboxPageQuery {
  status?: OutboxStatus;
  /** One recipient, E.164. */
  to?: string;
  /** The `nextCursor` of the previous page of the same query. */
  after?: string;
  /** Default 50, at most {@link MAX_OUTBOX_PAGE}. */
  limit?: number;
}

export const MAX_OUTBOX_PAGE = 200;

export const OUTBOX_SEND_JOB = "reachkit.outbox.send";

/**
 * Every outbound SMS goes through here: persisted first, then sent by a durable
 * job through the SmsSender port, at most `ratePerSecond` per sender number,
 * with the message id as the provider's idempotency key so a crash between
 * send and commit never sends twice.
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
    private readonly accounts: () => Accounts | undefined,
    private readonly logger: Logger,
    private readonly settings: MessagingSettings,
    /** Told each time a message reaches a status (the metrics count them). */
    private readonly reached: (status: OutboxStatus) => void = () => undefined,
  ) {
    this.#messages = storage.collection(OUTBOX_COLLECTION);
  }

  /** Records a message and queues its delivery. Returns the stored message (maybe suppressed, maybe an earlier one). */
  async send(message: OutboundMessage): Promise<OutboxMessage> {
    const now = this.clock.now();
    let stored: "queued" | "suppressed" | undefined;
    const result = await this.storage.transaction(async () => {
      if (message.idempotencyKey !== undefined) {
        const existing = await this.#messages.findOne({ companyId: message.companyId, idempotencyKey: message.idempotencyKey });
        if (existing) return existing;
      }
      const company = await this.accounts()?.getCompany(message.companyId);
      const id = sortableId(now);
      const record: OutboxMessage = {
        id,
        companyId: message.companyId,
        to: message.to,
        from: company?.senderNumber ?? this.settings.defaultSender,
        body: message.body,
        ...(message.mediaUrl !== undefined ? { mediaUrl: message.mediaUrl } : {}),
        kind: message.kind,
        status: "queued",
        idempotencyKey: message.idempotencyKey ?? id,
        ...(message.tags ? { tags: message.tags } : {}),
        attempts: 0,
        createdAt: now,
        updatedAt: now,
      };
      if (message.suppressDuplicates && (await this.#isDuplicate(record))) {
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

  /**
   * One page of a company's messages, newest first, all or in one status or to
   * one number: a keyset read on an index, so a late page costs what the first does.
   */
  async page(companyId: string, query: OutboxPageQuery = {}): Promise<Page<OutboxMessage>> {
    const where: Where<OutboxMessage> = { companyId };
    if (query.status !== undefined) where.status = query.status;
    if (query.to !== undefined) where.to = query.to;
    const limit = Math.min(Math.max(Math.trunc(query.limit ?? 50), 1), MAX_OUTBOX_PAGE);
    return this.#messages.find({ where, orderBy: [{ field: "createdAt", direction: "desc" }, { field: "id", direction: "desc" }], limit, after: query.after });
  }

  /** How many of a company's messages were created on each day of `days` (each `[start, end)`, epoch ms), by their status now. */
  async dailyCounts(companyId: string, days: readonly { start: number; end: number }[]): Promise<Array<{ day: number; counts: Record<OutboxStatus, number> }>> {
    const daily = [];
    for (const { start, end } of days) {
      const counts = {} as Record<OutboxStatus, number>;
      for (const status of OUTBOX_STATUSES) counts[status] = await this.#messages.count({ companyId, status, createdAt: { gte: start, lt: end } });
      daily.push({ day: start, counts });
    }
    return daily;
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

  async #fail(message: OutboxMessage, reason: string): Promise<JobOutcome> {
    this.logger.warn("message not sent", { messageId: message.id, companyId: message.companyId, reason });
    await this.#messages.update(message.id, { status: "failed", reason, updatedAt: this.clock.now() });
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

export const OUTBOX = defineToken<Outbox>("Outbox", ["reachkit core (always bound)"]);
