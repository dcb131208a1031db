import PQueue from "p-queue";
import type { Accounts } from "../auth/accounts.ts";
import type { EventBus } from "../events/event-bus.ts";
import { sortableId } from "../kernel/ids.ts";
import { defineToken } from "../kernel/token.ts";
import type { JobContext, JobOutcome } from "../jobs/job-runner.ts";
import type { Jobs } from "../jobs/jobs.ts";
import type { Clock } from "../ports/clock.ts";
import type { Logger } from "../ports/logger.ts";
import { SmsSendError, type SmsSender } from "../ports/sms-sender.ts";
import type { Collection, Patch, Storage, Where } from "../ports/storage.ts";
import { nextDeliveryStatus, type DeliveryReceipt, type DeliveryStatus, type ReportedStatus } from "./delivery-status.ts";
import { OUTBOX_COLLECTION, type OutboxMessage, type OutboxStatus } from "./outbox-record.ts";

export interface MessagingSettings {
  /** Messages per second per sender number. `Infinity` lifts the limit. */
  ratePerSecond: number;
  /** The rate of single sender numbers, over `ratePerSecond` (a short code sends faster than a long code). */
  ratePerSecondBySender: Readonly<Record<string, number>>;
  /** The sender of companies that have none set. */
  defaultSender: string;
  /** The same body to the same number within this window is suppressed when the caller asks for it. */
  duplicateWindowMs: number;
}

export const DEFAULT_MESSAGING_SETTINGS: MessagingSettings = {
  ratePerSecond: 10,
  ratePerSecondBySender: {},
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

export const OUTBOX_SEND_JOB = "reachkit.outbox.send";

/** How long `sendNow` leaves its own attempt before the message's job may retry it. */
const SEND_NOW_RETRY_DELAY_MS = 60_000;

/** One attempt at a message: whether it is the last the job makes, and where it logs. */
interface Attempt {
  final: boolean;
  logger: Logger;
}

/** How a message's status moves, with what the provider said. */
interface StatusChange {
  status: ReportedStatus;
  providerMessageId?: string;
  errorCode?: string;
  reason?: string;
  optedOut?: boolean;
}

/**
 * Every outbound SMS goes through here: persisted first, then sent by a durable
 * job through the SmsSender port, at most `ratePerSecond` per sender number,
 * with the message id as the provider's idempotency key. An attempt is marked
 * in flight before it leaves, so the attempt after a crash between send and
 * commit asks the provider (`earlierAttemptAt`) instead of sending twice.
 * Receipts move a message on (queued → sent → delivered | undelivered |
 * failed), each move announced as `message.status_changed`.
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
    private readonly events: EventBus,
    /** Told each time a message reaches a status (the metrics count them). */
    private readonly reached: (status: OutboxStatus) => void = () => undefined,
  ) {
    this.#messages = storage.collection(OUTBOX_COLLECTION);
  }

  /** Records a message and queues its delivery. Returns the stored message (maybe suppressed, maybe an earlier one). */
  send(message: OutboundMessage): Promise<OutboxMessage> {
    return this.#record(message);
  }

  /**
   * Records a message and makes its first attempt in this call, for an
   * operator's test text (`reachkit sms send-test`): returns the message as
   * the attempt left it. Its job, due a minute later, retries what the
   * attempt could not finish (an outage, or a process stopped mid-send).
   */
  async sendNow(message: OutboundMessage): Promise<OutboxMessage> {
    const record = await this.#record(message, this.clock.now() + SEND_NOW_RETRY_DELAY_MS);
    if (record.status === "queued") {
      // A failure to retry is the job's; the message as it stands says what happened.
      await this.#inTurn(record.id, { final: false, logger: this.logger }).catch(() => undefined);
    }
    return (await this.#messages.get(record.id)) ?? record;
  }

  async #record(message: OutboundMessage, runAt?: number): Promise<OutboxMessage> {
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
  deliver(payload: { messageId: string }, context: JobContext): Promise<JobOutcome | undefined> {
    return this.#inTurn(payload.messageId, { final: context.attempt >= context.job.maxAttempts, logger: context.logger });
  }

  async #inTurn(messageId: string, attempt: Attempt): Promise<JobOutcome | undefined> {
    // Deliveries hand their texts to the senders' queues in the order they started, which is the order
    // their jobs were claimed (due time, then creation): a booking confirmation queued before a
    // cancellation is sent before it, even when the storage's round trips finish out of order.
    const previousHandOff = this.#lastHandOff;
    let handOff!: () => void;
    const ownHandOff = new Promise<void>((resolve) => (handOff = resolve));
    // A delivery that ends without sending still passes the turn on only after the ones before it.
    this.#lastHandOff = previousHandOff.then(() => ownHandOff);
    try {
      return await this.#deliver(messageId, attempt, { previous: previousHandOff, handedOff: handOff });
    } finally {
      handOff();
    }
  }

  async #deliver(messageId: string, attempt: Attempt, turn: { previous: Promise<void>; handedOff: () => void }): Promise<JobOutcome | undefined> {
    const message = await this.#messages.get(messageId);
    if (!message || message.status !== "queued") return; // already handled by an earlier run, or by a receipt
    const sender = this.sms();
    if (!sender) return this.#fail(message, { status: "failed", reason: "no SmsSender adapter is configured" });
    const earlierAttemptAt = message.inFlightSince;
    // Committed before the text leaves: if the process dies before the outcome is recorded, the next attempt knows.
    await this.#messages.update(message.id, { attempts: message.attempts + 1, inFlightSince: earlierAttemptAt ?? this.clock.now(), updatedAt: this.clock.now() });
    try {
      await turn.previous;
      const sending = this.#limiter(message.from).add(() =>
        sender.send({
          from: message.from,
          to: message.to,
          body: message.body,
          ...(message.mediaUrl !== undefined ? { mediaUrl: message.mediaUrl } : {}),
          idempotencyKey: message.id,
          ...(earlierAttemptAt !== undefined ? { earlierAttemptAt } : {}),
        }),
      );
      turn.handedOff();
      const sent = await sending;
      await this.#move(message, { status: "sent", providerMessageId: sent?.providerMessageId });
      return { messageId: message.id, status: "sent" };
    } catch (error) {
      const failure = error instanceof SmsSendError ? error : undefined;
      const reason = error instanceof Error ? error.message : String(error);
      // An error the adapter does not explain may have come after the request left.
      const mayHaveSent = failure?.mayHaveSent ?? true;
      const retryable = failure?.retryable ?? true;
      if (!retryable || attempt.final) {
        return this.#fail(message, { status: "failed", reason, errorCode: failure?.providerCode, optedOut: failure?.kind === "opted_out" });
      }
      // The reason stays for `outbox list` while the message waits for its next attempt.
      await this.#messages.update(message.id, { reason, ...(mayHaveSent ? {} : { inFlightSince: earlierAttemptAt }), updatedAt: this.clock.now() });
      attempt.logger.warn("sending failed; will retry", { messageId: message.id, reason, errorCode: failure?.providerCode });
      throw error;
    }
  }

  /**
   * Records a provider's receipt: the message moves forward (never back, a
   * final status stays) and the move is announced. A receipt for no message
   * of this outbox (another system's, or erased by a privacy request) is ignored.
   */
  async applyReceipt(receipt: DeliveryReceipt): Promise<void> {
    const message =
      receipt.messageId !== undefined
        ? await this.#messages.get(receipt.messageId)
        : await this.#messages.findOne({ providerMessageId: receipt.providerMessageId });
    if (!message) {
      this.logger.debug("receipt for no known message", { providerMessageId: receipt.providerMessageId });
      return;
    }
    if (message.providerMessageId !== undefined && message.providerMessageId !== receipt.providerMessageId) {
      this.logger.warn("receipt names another provider message", { messageId: message.id, providerMessageId: receipt.providerMessageId });
      return;
    }
    await this.#move(message, {
      status: receipt.status,
      providerMessageId: receipt.providerMessageId,
      errorCode: receipt.errorCode,
      reason: receipt.errorMessage,
      optedOut: receipt.optedOut,
    });
  }

  async #fail(message: OutboxMessage, change: StatusChange): Promise<JobOutcome> {
    this.logger.warn("message not sent", { messageId: message.id, companyId: message.companyId, reason: change.reason, errorCode: change.errorCode });
    await this.#move(message, change);
    return { messageId: message.id, status: "failed" };
  }

  /**
   * Moves a message to a later status if it has not moved there or beyond
   * meanwhile (a receipt can overtake the send's own commit), then announces it.
   */
  async #move(message: OutboxMessage, change: StatusChange): Promise<void> {
    let current: OutboxMessage | undefined = message;
    // A concurrent move (the send's commit and a receipt) makes the conditional update miss once; read and try again.
    for (let tries = 0; current && tries < 3; tries++) {
      if (current.status === "suppressed") return;
      const status = nextDeliveryStatus(current.status, change.status);
      if (!status) return;
      const now = this.clock.now();
      // The reason of an earlier failed attempt goes: the reason is the new status's, if any.
      const patch: Patch<OutboxMessage> = { status, reason: change.reason, updatedAt: now, inFlightSince: undefined };
      if (change.providerMessageId !== undefined) patch.providerMessageId = change.providerMessageId;
      if (change.errorCode !== undefined) patch.errorCode = change.errorCode;
      if (current.sentAt === undefined && status !== "failed") patch.sentAt = now;
      if (status === "delivered") patch.deliveredAt = now;
      const before = current;
      // The event in the move's transaction: in-transaction listeners (webhook deliveries) commit with the move.
      const moved = await this.storage.transaction(async () => {
        const updated = await this.#messages.update(before.id, patch, { where: { status: before.status } });
        if (updated) await this.#announce(before, updated, change);
        return updated;
      });
      if (moved) return this.reached(status);
      current = await this.#messages.get(current.id);
    }
  }

  async #announce(before: OutboxMessage, after: OutboxMessage, change: StatusChange): Promise<void> {
    const at = after.updatedAt;
    await this.events.emit("message.status_changed", {
      channel: "sms",
      companyId: after.companyId,
      messageId: after.id,
      to: after.to,
      kind: after.kind,
      status: change.status,
      previousStatus: before.status as DeliveryStatus,
      ...(after.providerMessageId !== undefined ? { providerMessageId: after.providerMessageId } : {}),
      ...(change.errorCode !== undefined ? { errorCode: change.errorCode } : {}),
      ...(change.reason !== undefined ? { reason: change.reason } : {}),
      at,
    });
    if (change.optedOut) {
      // Its listeners run after the commit: should the process die before one records it, the carrier refuses the next text to this number too.
      await this.events.emit("sms.recipient_opted_out", {
        companyId: after.companyId,
        phone: after.to,
        from: after.from,
        messageId: after.id,
        ...(change.errorCode !== undefined ? { errorCode: change.errorCode } : {}),
        at,
      });
    }
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
      const rate = this.settings.ratePerSecondBySender[from] ?? this.settings.ratePerSecond;
      // Strict: a sliding window, so no second ever holds more than `rate` sends (a fixed window lets two bursts meet at its edge).
      limiter = Number.isFinite(rate) ? new PQueue({ intervalCap: rate, interval: 1000, strict: true }) : new PQueue();
      this.#limiters.set(from, limiter);
    }
    return limiter;
  }
}

export const OUTBOX = defineToken<Outbox>("Outbox", ["reachkit core (always bound)"]);
