import type { Accounts, Company } from "../auth/accounts.ts";
import type { EventBus } from "../events/event-bus.ts";
import { sortableId } from "../kernel/ids.ts";
import { defineToken } from "../kernel/token.ts";
import type { JobContext, JobOutcome } from "../jobs/job-definition.ts";
import type { Jobs } from "../jobs/jobs.ts";
import type { Clock } from "../ports/clock.ts";
import type { EmailSender } from "../ports/email-sender.ts";
import type { Logger } from "../ports/logger.ts";
import type { SmsSender } from "../ports/sms-sender.ts";
import type { Collection, Page, Storage, Where } from "../ports/storage.ts";
import type { DeliveryReceipt } from "./delivery-status.ts";
import { MessageStatuses } from "./message-statuses.ts";
import { emailRecordFields, type OutboundEmailMessage } from "./outbound-email.ts";
import { IN_FLIGHT_RECHECK_MS, OutboxDeliveries } from "./outbox-deliveries.ts";
import { OutboxDrains, type DrainPayload } from "./outbox-drains.ts";
import { isWindowed, RecipientWindows, type WindowedMessage } from "./outbox-windows.ts";
import { channelOf, OUTBOX_COLLECTION, OUTBOX_STATUSES, type OutboxMessage, type OutboxStatus } from "./outbox-record.ts";

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
  /**
   * `false`: a message the windows suppress is answered (status `suppressed`) and counted, but not stored. For a
   * caller that records the attempt itself (a repeated opt-in's change record): a burst of repeats then costs one
   * stored text, not one row each. Default `true`.
   */
  recordSuppressed?: boolean;
  tags?: Record<string, string>;
  /**
   * The company as the caller has just read it (`Accounts.getCompany`): spares the outbox its own read of the
   * sender number. Used only when its id is `companyId`.
   */
  company?: Company;
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

/** Whether a list given to `method` has messages; they must all be of one company (a TypeError otherwise). */
function ofOneCompany(messages: readonly { companyId: string }[], method: string): boolean {
  const companyId = messages[0]?.companyId;
  if (messages.some((message) => message.companyId !== companyId)) throw new TypeError(`${method} takes the messages of one company`);
  return companyId !== undefined;
}

/**
 * The job of one message's delivery that the outbox queued before a message carried its own queue state:
 * such jobs left in a database still run, and hand their message to its sender's drain.
 */
export const OUTBOX_SEND_JOB = "reachkit.outbox.send";

/** What the outbox records of any message, text or email. */
type RecordedMessage = WindowedMessage & { companyId: string; idempotencyKey?: string; recordSuppressed?: boolean; company?: Company };

/**
 * Every outbound SMS and email goes through here: persisted first, queued
 * with its due time, then sent by its sender's drain (OutboxDrains: one
 * durable job per sender number or From) through the SmsSender or
 * EmailSender port (texts at most `ratePerSecond` per sender number), with
 * the message id as the provider's idempotency key. An attempt is marked
 * in flight before it leaves, so the attempt after a crash between send and
 * commit asks the provider (`earlierAttemptAt`) instead of sending twice.
 * Receipts move a message on (queued → sent → delivered | undelivered |
 * failed), each move announced as `message.status_changed`.
 */
export class Outbox {
  readonly #messages: Collection<OutboxMessage>;
  readonly #statuses: MessageStatuses;
  readonly #deliveries: OutboxDeliveries;
  readonly #drains: OutboxDrains;

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    jobs: Jobs,
    sms: () => SmsSender | undefined,
    email: () => EmailSender | undefined,
    private readonly accounts: () => Accounts | undefined,
    private readonly logger: Logger,
    private readonly settings: MessagingSettings,
    events: EventBus,
    /** Told each time a message reaches a status (the metrics count them). */
    private readonly reached: (status: OutboxStatus) => void = () => undefined,
  ) {
    this.#messages = storage.collection(OUTBOX_COLLECTION);
    this.#statuses = new MessageStatuses(this.#messages, storage, clock, logger, events, reached);
    this.#deliveries = new OutboxDeliveries(this.#messages, storage, clock, sms, email, settings, this.#statuses, jobs.retries);
    this.#drains = new OutboxDrains(this.#messages, storage, clock, jobs, this.#deliveries);
  }

  /** Records a text and queues its delivery. Returns the stored message (maybe suppressed, maybe an earlier one). */
  send(message: OutboundMessage): Promise<OutboxMessage> {
    return this.#sendText(message);
  }

  /**
   * Records texts of one company and queues their delivery in one transaction (a campaign's page, a batch of
   * opt-ins' answers): one read of the idempotency keys already taken, one of the company, for texts that ask
   * for a duplicate or repeat window one look-up per number and body or kind (their numbers held in sorted
   * order to the commit), one write of the messages (queued and suppressed), and each sender's drain armed once.
   * Answers the stored messages in order, each as `send` would one after the other (an earlier message for a
   * key already taken, in storage or earlier in the list; a text suppressed by one stored or earlier in the list).
   */
  async sendMany(messages: readonly OutboundMessage[]): Promise<OutboxMessage[]> {
    if (!ofOneCompany(messages, "sendMany")) return [];
    return this.#recordMany(messages, (message, id, now, company) => this.#textRecord(message, id, now, company));
  }

  /**
   * `sendEmail` for emails of one company (a campaign's page), in one transaction: one read of the idempotency
   * keys already taken, one of the company, one write of the messages, each From's drain armed once. Answers
   * the stored messages in order, each as `sendEmail` would.
   */
  async sendEmailMany(messages: readonly OutboundEmailMessage[]): Promise<OutboxMessage[]> {
    if (!ofOneCompany(messages, "sendEmailMany")) return [];
    // Checked before anything is written, as sendEmail does: a header an email may not set fails the whole list.
    const fieldsOf = new Map(messages.map((message) => [message, emailRecordFields(message, this.settings.emailFrom)]));
    return this.#recordMany(messages, (message, id, now, company) => ({ ...queuedRecord(id, now, message), ...fieldsOf.get(message)!(company) }));
  }

  /**
   * Stores messages of one company built by `build` (each unless its key was taken), suppressed or queued for
   * their senders' drains (due at `runAt`, else now), in one transaction and one write.
   */
  async #recordMany<M extends RecordedMessage>(
    messages: readonly M[],
    build: (message: M, id: string, now: number, company: Company | undefined) => OutboxMessage,
    runAt?: number,
  ): Promise<OutboxMessage[]> {
    const companyId = messages[0]!.companyId;
    const now = this.clock.now();
    const decided: OutboxMessage[] = [];
    const written: OutboxMessage[] = [];
    const stored = await this.storage.transaction(async () => {
      const keys = [...new Set(messages.flatMap((message) => (message.idempotencyKey !== undefined ? [message.idempotencyKey] : [])))];
      const taken = keys.length === 0 ? [] : (await this.#messages.find({ where: { companyId, idempotencyKey: { in: keys } } })).items;
      const byKey = new Map(taken.map((message) => [message.idempotencyKey, message]));
      const company = await this.#companyOf(messages[0]!);
      const windowed = messages.filter((message) => isWindowed(message) && !(message.idempotencyKey !== undefined && byKey.has(message.idempotencyKey)));
      const windows = windowed.length === 0 ? undefined : await RecipientWindows.read(this.#messages, companyId, windowed, now, this.settings.duplicateWindowMs);
      const answers = messages.map((message) => {
        const earlier = message.idempotencyKey !== undefined ? byKey.get(message.idempotencyKey) : undefined;
        if (earlier) return earlier;
        const record = build(message, sortableId(now), now, company);
        const suppressed = windows?.suppression(message);
        const kept: OutboxMessage = suppressed === undefined ? { ...record, dueAt: runAt ?? now } : { ...record, status: "suppressed", reason: suppressed };
        byKey.set(kept.idempotencyKey, kept);
        windows?.add(kept);
        decided.push(kept);
        if (suppressed === undefined || message.recordSuppressed !== false) written.push(kept);
        return kept;
      });
      // One message (a `send`): the single-row insert, as ever; a list, the multi-row write.
      if (written.length === 1) await this.#messages.insert(written[0]!);
      else if (written.length > 1) await this.#messages.upsertMany(written);
      await this.#queueDelivery(written.filter((message) => message.status === "queued"));
      return answers;
    });
    // Counted once committed: the caller's transaction, when there is one, is not known here.
    for (const message of decided) this.reached(message.status);
    return stored;
  }

  async #sendText(message: OutboundMessage, runAt?: number): Promise<OutboxMessage> {
    const [stored] = await this.#recordMany([message], (text, id, now, company) => this.#textRecord(text, id, now, company), runAt);
    return stored!;
  }

  #textRecord(message: OutboundMessage, id: string, now: number, company: Company | undefined): OutboxMessage {
    return {
      ...queuedRecord(id, now, message),
      to: message.to,
      from: company?.senderNumber ?? this.settings.defaultSender,
      body: message.body,
      ...(message.mediaUrl !== undefined ? { mediaUrl: message.mediaUrl } : {}),
    };
  }

  /**
   * Records an email and queues its delivery, from `emailFrom` under the
   * company's name. Returns the stored message (maybe an earlier one with the same key).
   * Throws a TypeError for a header the message may not set.
   */
  async sendEmail(message: OutboundEmailMessage): Promise<OutboxMessage> {
    const [stored] = await this.sendEmailMany([message]);
    return stored!;
  }

  /**
   * Records a message and makes its first attempt in this call, for an
   * operator's test text (`reachkit sms send-test`): returns the message as
   * the attempt left it. It stays queued, due a minute later: its sender's
   * drain retries what the attempt could not finish (an outage, or a process
   * stopped mid-send).
   */
  async sendNow(message: OutboundMessage): Promise<OutboxMessage> {
    const record = await this.#sendText(message, this.clock.now() + IN_FLIGHT_RECHECK_MS);
    if (record.status === "queued" && record.attempts === 0) {
      // A failure to retry is the drain's; the message as it stands says what happened.
      const [outcome] = await this.#deliveries.start([record], { logger: this.logger, keepDueAt: true });
      await outcome;
    }
    return (await this.#messages.get(record.id)) ?? record;
  }

  /** The message's company: the one its caller read (when it is the message's), else read here. */
  async #companyOf(message: { companyId: string; company?: Company }): Promise<Company | undefined> {
    return message.company?.id === message.companyId ? message.company : await this.accounts()?.getCompany(message.companyId);
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
  async deleteForRecipient(companyId: string, to: string): Promise<number> {
    return this.#messages.deleteWhere({ companyId, to });
  }

  /** In the transaction that stored them (queued, each with its `dueAt`): their senders' drains run by then. */
  async #queueDelivery(messages: readonly OutboxMessage[]): Promise<void> {
    // One arming per sender, for its earliest message: a page of a campaign's texts holds its sender's key once.
    const earliest = new Map<string, OutboxMessage>();
    for (const message of messages) {
      const sender = `${channelOf(message)}:${message.from}`;
      const before = earliest.get(sender);
      if (!before || message.dueAt! < before.dueAt!) earliest.set(sender, message);
    }
    for (const message of earliest.values()) await this.#drains.arm(message);
  }

  /** The handler of the drain job: sends one sender's due messages. */
  drain(payload: DrainPayload, context: JobContext): Promise<JobOutcome> {
    return this.#drains.drain(payload, context);
  }

  /**
   * The handler of a send job queued before messages carried their own queue state: its message, still
   * queued, is due when the job was and goes out with its sender's drain.
   */
  async deliver(payload: { messageId: string }, context: JobContext): Promise<JobOutcome> {
    return this.storage.transaction(async (): Promise<JobOutcome> => {
      const message = await this.#messages.get(payload.messageId);
      if (!message || message.status !== "queued") return { messageId: payload.messageId, handedToDrain: false };
      const queued = message.dueAt === undefined ? await this.#messages.update(message.id, { dueAt: context.job.runAt }) : message;
      if (queued) await this.#queueDelivery([queued]);
      return { messageId: message.id, handedToDrain: true };
    });
  }

  /**
   * Records a provider's receipt: the message moves forward (never back, a
   * final status stays) and the move is announced. A receipt for no message
   * of this outbox (another system's, or erased by a privacy request) is ignored.
   */
  applyReceipt(receipt: DeliveryReceipt): Promise<void> {
    return this.#statuses.applyReceipt(receipt);
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
