import PQueue from "p-queue";
import type { Accounts } from "../auth/accounts.ts";
import { sortableId } from "../kernel/ids.ts";
import { defineToken } from "../kernel/token.ts";
import { RunLaterError } from "../jobs/job-record.ts";
import type { JobContext, JobOutcome } from "../jobs/job-runner.ts";
import type { Jobs } from "../jobs/jobs.ts";
import type { Clock } from "../ports/clock.ts";
import type { Logger } from "../ports/logger.ts";
import { SmsSendError, type SmsSender } from "../ports/sms-sender.ts";
import type { Collection, Storage, Where } from "../ports/storage.ts";
import { OUTBOX_COLLECTION, type OutboxMessage, type OutboxStatus } from "./outbox-record.ts";
import { SenderSchedule } from "./sender-schedule.ts";

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
  /**
   * Suppress (status `suppressed`) if a message of the same `kind` went, or is queued to go, to the same
   * number within this many milliseconds: answers to a request repeated in a burst go out once. 0 or
   * absent: no such limit.
   */
  onePerKindWithinMs?: number;
  tags?: Record<string, string>;
}

export interface OutboxListOptions {
  companyId?: string;
  to?: string;
  limit?: number;
}

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
  /** When each sender number's texts may go out (none with an infinite rate). */
  readonly #schedules = new Map<string, SenderSchedule>();
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
      if (message.suppressDuplicates && (await this.#sentRecently(record, this.settings.duplicateWindowMs, (other) => other.body === record.body))) {
        stored = "suppressed";
        return this.#messages.insert({ ...record, status: "suppressed", reason: "duplicate: the same message went to this number recently" });
      }
      if (message.onePerKindWithinMs && (await this.#sentRecently(record, message.onePerKindWithinMs, (other) => other.kind === record.kind))) {
        stored = "suppressed";
        return this.#messages.insert({ ...record, status: "suppressed", reason: `repeat: a ${record.kind} text went to this number recently` });
      }
      await this.#messages.insert(record);
      const runAt = this.#schedule(record.from)?.reserve(now) ?? now;
      await this.jobs.enqueue({ type: OUTBOX_SEND_JOB, payload: { messageId: id }, key: `outbox:${id}`, companyId: message.companyId, runAt });
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
    const sender = this.sms();
    if (!sender) return this.#fail(message, "no SmsSender adapter is configured");
    await turn.previous;
    // Decided in turn: a text held back sends every later one of its sender behind it (SenderSchedule).
    const later = this.#schedule(message.from)?.holdBack(this.clock.now(), context.job.runAt);
    if (later !== undefined) throw new RunLaterError(later, `the sender ${message.from} sends ${this.settings.ratePerSecond} texts a second`);
    await this.#messages.update(message.id, { attempts: message.attempts + 1, updatedAt: this.clock.now() });
    try {
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

  /** Whether a message like `record` (by `alike`) went, or is queued to go, to its number within the last `windowMs`. */
  async #sentRecently(record: OutboxMessage, windowMs: number, alike: (other: OutboxMessage) => boolean): Promise<boolean> {
    const recent = await this.#messages.find({
      where: { companyId: record.companyId, to: record.to, createdAt: { gte: record.createdAt - windowMs } },
    });
    return recent.items.some((other) => alike(other) && (other.status === "queued" || other.status === "sent"));
  }

  #schedule(from: string): SenderSchedule | undefined {
    if (!Number.isFinite(this.settings.ratePerSecond)) return undefined;
    let schedule = this.#schedules.get(from);
    if (!schedule) this.#schedules.set(from, (schedule = new SenderSchedule(this.settings.ratePerSecond)));
    return schedule;
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
