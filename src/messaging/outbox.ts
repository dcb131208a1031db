import PQueue from "p-queue";
import type { Accounts, Company } from "../auth/accounts.ts";
import type { EventBus } from "../events/event-bus.ts";
import { GroupCommit } from "../kernel/group-commit.ts";
import { sortableId } from "../kernel/ids.ts";
import { defineToken } from "../kernel/token.ts";
import { RunLaterError } from "../jobs/job-record.ts";
import type { JobContext, JobOutcome } from "../jobs/job-runner.ts";
import type { Jobs } from "../jobs/jobs.ts";
import type { Clock } from "../ports/clock.ts";
import { EmailSendError, type EmailSender } from "../ports/email-sender.ts";
import type { Logger } from "../ports/logger.ts";
import { SmsSendError, type SmsSender } from "../ports/sms-sender.ts";
import type { Collection, Page, Patch, Storage, Where } from "../ports/storage.ts";
import { nextDeliveryStatus, type DeliveryReceipt, type DeliveryStatus, type ReportedStatus } from "./delivery-status.ts";
import { emailRecordFields, type OutboundEmailMessage } from "./outbound-email.ts";
import { channelOf, OUTBOX_COLLECTION, OUTBOX_STATUSES, type OutboxMessage, type OutboxStatus } from "./outbox-record.ts";
import { SenderSchedule } from "./sender-schedule.ts";

export interface MessagingSettings {
  /** Messages per second per sender number. `Infinity` lifts the limit. */
  ratePerSecond: number;
  /** The rate of single sender numbers, over `ratePerSecond` (a short code sends faster than a long code). */
  ratePerSecondBySender: Readonly<Record<string, number>>;
  /** The sender of companies that have none set. */
  defaultSender: string;
  /** The same body to the same number within this window is suppressed when the caller asks for it. */
  duplicateWindowMs: number;
  /** The address emails come from; the company's name is shown beside it. */
  emailFrom: string;
  /**
   * Texts of one sender number waiting on the provider at once. Deliveries run in twice as many job
   * slots of their own, beside the job runner's `concurrency`, so that the next texts are read and
   * marked in flight while the provider answers: a provider slow to answer holds these, never the
   * slots of opt-ins and other jobs.
   */
  sendsAtOnce: number;
}

export const DEFAULT_MESSAGING_SETTINGS: MessagingSettings = {
  ratePerSecond: 10,
  ratePerSecondBySender: {},
  defaultSender: "+15550000000",
  duplicateWindowMs: 5 * 60_000,
  emailFrom: "no-reply@reachkit.invalid",
  sendsAtOnce: 8,
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

/** The statuses of a message that reached its number, or may yet: what a duplicate or a repeat is judged against. */
const WENT_OR_GOING: ReadonlySet<OutboxStatus> = new Set(["queued", "sent", "delivered"]);

/** How long `sendNow` leaves its own attempt before the message's job may retry it. */
const SEND_NOW_RETRY_DELAY_MS = 60_000;

/** One attempt at a message: whether it is the last the job makes, and where it logs. */
interface Attempt {
  final: boolean;
  /** When its job fell due; absent for an attempt made outside a job (`sendNow`), which is not held back. */
  dueAt?: number;
  /** Marks its job done, with the outcome it commits; absent outside a job. */
  markDone?: () => Promise<void>;
  logger: Logger;
}

/** Runs a message's update: at once, or with the writes of the deliveries beside it. */
type Write = (update: () => Promise<OutboxMessage | undefined>) => Promise<OutboxMessage | undefined>;

/** How a message's status moves, with what the provider said. */
interface StatusChange {
  status: ReportedStatus;
  providerMessageId?: string;
  errorCode?: string;
  reason?: string;
  optedOut?: boolean;
}

/**
 * Every outbound SMS and email goes through here: persisted first, then sent
 * by a durable job through the SmsSender or EmailSender port (texts at most
 * `ratePerSecond` per sender number), with the message id as the provider's
 * idempotency key. An attempt is marked
 * in flight before it leaves, so the attempt after a crash between send and
 * commit asks the provider (`earlierAttemptAt`) instead of sending twice.
 * Receipts move a message on (queued → sent → delivered | undelivered |
 * failed), each move announced as `message.status_changed`.
 */
export class Outbox {
  readonly #messages: Collection<OutboxMessage>;
  readonly #limiters = new Map<string, PQueue>();
  /** When each sender number's texts may go out (none with an infinite rate). */
  readonly #schedules = new Map<string, SenderSchedule>();
  /** Settles when the delivery started last has handed its text to its sender's queue (or given up). */
  #lastHandOff: Promise<void> = Promise.resolve();
  /** The outcomes of the deliveries answered together, with their jobs' ends: a commit for them all. */
  readonly #deliveryWrites: GroupCommit;
  /** Deliveries started and not ended: those that may write with the next group. */
  #underway = 0;

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly jobs: Jobs,
    private readonly sms: () => SmsSender | undefined,
    private readonly email: () => EmailSender | undefined,
    private readonly accounts: () => Accounts | undefined,
    private readonly logger: Logger,
    private readonly settings: MessagingSettings,
    private readonly events: EventBus,
    /** Told each time a message reaches a status (the metrics count them). */
    private readonly reached: (status: OutboxStatus) => void = () => undefined,
  ) {
    if (!Number.isSafeInteger(settings.sendsAtOnce) || settings.sendsAtOnce < 1) {
      throw new RangeError(`messaging.sendsAtOnce must be a whole number of at least 1, got ${String(settings.sendsAtOnce)}`);
    }
    this.#messages = storage.collection(OUTBOX_COLLECTION);
    this.#deliveryWrites = new GroupCommit(
      (work) => storage.transaction(work),
      () => this.#underway,
    );
  }

  /** Records a text and queues its delivery. Returns the stored message (maybe suppressed, maybe an earlier one). */
  send(message: OutboundMessage): Promise<OutboxMessage> {
    return this.#sendText(message);
  }

  #sendText(message: OutboundMessage, runAt?: number): Promise<OutboxMessage> {
    return this.#record(message, runAt, (id, now, company) => ({
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
   * Throws a TypeError for a header the message may not set.
   */
  async sendEmail(message: OutboundEmailMessage): Promise<OutboxMessage> {
    const fields = emailRecordFields(message, this.settings.emailFrom);
    return this.#record(message, undefined, (id, now, company) => ({ ...queuedRecord(id, now, message), ...fields(company) }));
  }

  /**
   * Records a message and makes its first attempt in this call, for an
   * operator's test text (`reachkit sms send-test`): returns the message as
   * the attempt left it. Its job, due a minute later, retries what the
   * attempt could not finish (an outage, or a process stopped mid-send).
   */
  async sendNow(message: OutboundMessage): Promise<OutboxMessage> {
    const record = await this.#sendText(message, this.clock.now() + SEND_NOW_RETRY_DELAY_MS);
    if (record.status === "queued") {
      // A failure to retry is the job's; the message as it stands says what happened.
      await this.#inTurn(record.id, { final: false, logger: this.logger }).catch(() => undefined);
    }
    return (await this.#messages.get(record.id)) ?? record;
  }

  /** Stores a message built by `build` (unless its key was seen), suppressed or with its delivery job. */
  async #record(
    message: { companyId: string; idempotencyKey?: string; suppressDuplicates?: boolean; onePerKindWithinMs?: number },
    runAt: number | undefined,
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
      if (message.suppressDuplicates && (await this.#sentRecently(record, this.settings.duplicateWindowMs, (other) => other.body === record.body))) {
        stored = "suppressed";
        return this.#messages.insert({ ...record, status: "suppressed", reason: "duplicate: the same message went to this number recently" });
      }
      if (message.onePerKindWithinMs && (await this.#sentRecently(record, message.onePerKindWithinMs, (other) => other.kind === record.kind))) {
        stored = "suppressed";
        return this.#messages.insert({ ...record, status: "suppressed", reason: `repeat: a ${record.kind} text went to this number recently` });
      }
      await this.#messages.insert(record);
      const due = runAt ?? (channelOf(record) === "sms" ? this.#schedule(record.from)?.reserve(now) : undefined) ?? now;
      await this.jobs.enqueue({ type: OUTBOX_SEND_JOB, payload: { messageId: id }, key: `outbox:${id}`, companyId: message.companyId, runAt: due });
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
  deliver(payload: { messageId: string }, context: JobContext): Promise<JobOutcome | undefined> {
    return this.#inTurn(payload.messageId, {
      final: context.attempt >= context.job.maxAttempts,
      dueAt: context.job.runAt,
      markDone: context.markDone,
      logger: context.logger,
    });
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
    this.#underway++;
    try {
      return await this.#deliver(messageId, attempt, { previous: previousHandOff, handedOff: handOff });
    } finally {
      handOff();
      this.#underway--;
      this.#deliveryWrites.left();
    }
  }

  async #deliver(messageId: string, attempt: Attempt, turn: { previous: Promise<void>; handedOff: () => void }): Promise<JobOutcome | undefined> {
    const message = await this.#messages.get(messageId);
    if (!message || message.status !== "queued") return; // already handled by an earlier run, or by a receipt
    if (channelOf(message) === "email") {
      // Emails keep no order with texts: the texts after this one need not wait for it.
      turn.handedOff();
      return this.#deliverEmail(message, attempt);
    }
    const sender = this.sms();
    if (!sender) return this.#fail(message, { status: "failed", reason: "no SmsSender adapter is configured" });
    await turn.previous;
    // Decided in turn: a text held back sends every later one of its sender behind it (SenderSchedule).
    const later = attempt.dueAt === undefined ? undefined : this.#schedule(message.from)?.holdBack(this.clock.now(), attempt.dueAt);
    if (later !== undefined) throw new RunLaterError(later, `the sender ${message.from} sends ${this.#rate(message.from)} texts a second`);
    const earlierAttemptAt = message.inFlightSince;
    // Committed before the text leaves: if the process dies before the outcome is recorded, the next attempt knows.
    await this.#messages.update(message.id, { attempts: message.attempts + 1, inFlightSince: earlierAttemptAt ?? this.clock.now(), updatedAt: this.clock.now() });
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
    try {
      const sent = await sending;
      // With the outcomes of the texts answered beside it, and its job's end: one commit for them all.
      await this.#move(message, { status: "sent", providerMessageId: sent?.providerMessageId }, (update) =>
        this.#deliveryWrites.run(async () => {
          const moved = await update();
          if (moved) await attempt.markDone?.();
          return moved;
        }),
      );
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

  async #deliverEmail(message: OutboxMessage, attempt: Attempt): Promise<JobOutcome | undefined> {
    const sender = this.email();
    if (!sender) return this.#fail(message, { status: "failed", reason: "no EmailSender adapter is configured" });
    if (message.inFlightSince !== undefined) {
      const reason = "in doubt: an earlier attempt may have handed this email over before the process stopped; not sent again, so that it is never sent twice";
      return this.#fail(message, { status: "failed", reason, errorCode: "in_doubt" });
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
      await this.#move(message, { status: "sent", providerMessageId: sent.providerMessageId });
      return { messageId: message.id, status: "sent" };
    } catch (error) {
      const failure = error instanceof EmailSendError ? error : undefined;
      const reason = error instanceof Error ? error.message : String(error);
      if (!(failure?.retryable ?? true) || attempt.final) return this.#fail(message, { status: "failed", reason, errorCode: failure?.providerCode });
      // An error the adapter does not explain may have come after the message left.
      await this.#messages.update(message.id, { reason, ...(failure && !failure.mayHaveSent ? { inFlightSince: undefined } : {}), updatedAt: this.clock.now() });
      attempt.logger.warn("sending failed; will retry", { messageId: message.id, reason });
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
  async #move(message: OutboxMessage, change: StatusChange, write: Write = (update) => update()): Promise<void> {
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
      const { id, status: was } = current;
      const moved = await write(() => this.#messages.update(id, patch, { where: { status: was } }));
      if (moved) {
        this.reached(status);
        return this.#announce(current, moved, change);
      }
      current = await this.#messages.get(current.id);
    }
  }

  async #announce(before: OutboxMessage, after: OutboxMessage, change: StatusChange): Promise<void> {
    const at = after.updatedAt;
    await this.events.emit("message.status_changed", {
      channel: channelOf(after),
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
      // After the commit: should the process die before a listener records it, the carrier refuses the next text to this number too.
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

  /** Whether a message like `record` (by `alike`) went, or is queued to go, to its number within the last `windowMs`. */
  async #sentRecently(record: OutboxMessage, windowMs: number, alike: (other: OutboxMessage) => boolean): Promise<boolean> {
    const recent = await this.#messages.find({
      where: { companyId: record.companyId, to: record.to, createdAt: { gte: record.createdAt - windowMs } },
    });
    return recent.items.some((other) => alike(other) && WENT_OR_GOING.has(other.status));
  }

  #schedule(from: string): SenderSchedule | undefined {
    const rate = this.#rate(from);
    if (!Number.isFinite(rate)) return undefined;
    let schedule = this.#schedules.get(from);
    if (!schedule) this.#schedules.set(from, (schedule = new SenderSchedule(rate)));
    return schedule;
  }

  #rate(from: string): number {
    return this.settings.ratePerSecondBySender[from] ?? this.settings.ratePerSecond;
  }

  #limiter(from: string): PQueue {
    let limiter = this.#limiters.get(from);
    if (!limiter) {
      const rate = this.#rate(from);
      // Strict: a sliding window, so no second ever holds more than `rate` sends (a fixed window lets two bursts meet at its edge).
      const { sendsAtOnce: concurrency } = this.settings;
      limiter = Number.isFinite(rate) ? new PQueue({ concurrency, intervalCap: rate, interval: 1000, strict: true }) : new PQueue({ concurrency });
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

export const OUTBOX = defineToken<Outbox>("Outbox", ["reachkit core (always bound)"]);
