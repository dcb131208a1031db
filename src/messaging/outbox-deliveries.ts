import PQueue from "p-queue";
import { GroupCommit, type GroupWrite } from "../kernel/group-commit.ts";
import { RunLaterError } from "../jobs/job-record.ts";
import type { JobOutcome } from "../jobs/job-definition.ts";
import type { Clock } from "../ports/clock.ts";
import { EmailSendError, type EmailSender } from "../ports/email-sender.ts";
import type { Logger } from "../ports/logger.ts";
import { SmsSendError, type SentSms, type SmsSender } from "../ports/sms-sender.ts";
import type { Collection, Storage } from "../ports/storage.ts";
import type { MessageStatuses } from "./message-statuses.ts";
import type { MessagingSettings } from "./outbox.ts";
import { channelOf, type OutboxMessage } from "./outbox-record.ts";
import { SenderSchedule } from "./sender-schedule.ts";

/** One attempt at a message: whether it is the last the job makes, and where it logs. */
export interface Attempt {
  final: boolean;
  /** When its job fell due; absent for an attempt made outside a job (`sendNow`), which is not held back. */
  dueAt?: number;
  /** Marks its job done, with the outcome it commits (in that group's done marks); absent outside a job. */
  markDone?: (group: GroupWrite) => Promise<void>;
  logger: Logger;
}

/** What a delivery's batch made of it. */
type Prepared =
  | { kind: "handled" }
  | { kind: "email"; message: OutboxMessage }
  | { kind: "no sender"; message: OutboxMessage }
  | { kind: "later"; message: OutboxMessage; at: number }
  | { kind: "sending"; message: OutboxMessage; earlierAttemptAt: number | undefined; sending: Promise<SentSms | undefined> };

/** A delivery waiting for the batch it starts in. */
interface Waiting {
  messageId: string;
  attempt: Attempt;
  settle: (prepared: Prepared) => void;
  fail: (error: unknown) => void;
}

/**
 * The outbox's delivery path: one attempt at a stored message through the
 * SmsSender or EmailSender port. The deliveries that start together form a
 * batch: their messages are read in one query, decided in the order their
 * jobs were claimed (sent now, or held back for the sender's rate), and
 * marked in flight in one write, committed before any of them leaves;
 * batches follow one another, so texts reach their senders' queues in that
 * order. At most `ratePerSecond` texts a second and `sendsAtOnce` waiting on
 * the provider per sender number; the outcomes of the texts answered
 * together commit in one transaction with their jobs' done marks, and with
 * the in-flight marks of the batches read meanwhile.
 */
export class OutboxDeliveries {
  readonly #limiters = new Map<string, PQueue>();
  /** When each sender number's texts may go out (none with an infinite rate). */
  readonly #schedules = new Map<string, SenderSchedule>();
  /** Deliveries started since the batch under way began: the next batch. */
  #waiting: Waiting[] = [];
  #preparing = false;
  /** The outcomes of the deliveries answered together, with their jobs' ends: a commit for them all. */
  readonly #outcomes: GroupCommit;

  constructor(
    private readonly messages: Collection<OutboxMessage>,
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly sms: () => SmsSender | undefined,
    private readonly email: () => EmailSender | undefined,
    private readonly settings: MessagingSettings,
    private readonly statuses: MessageStatuses,
  ) {
    if (!Number.isSafeInteger(settings.sendsAtOnce) || settings.sendsAtOnce < 1) {
      throw new RangeError(`messaging.sendsAtOnce must be a whole number of at least 1, got ${String(settings.sendsAtOnce)}`);
    }
    this.#outcomes = new GroupCommit(storage);
  }

  /** When a new text of `from` may leave, from `now` on: undefined for a sender without a rate (at once). */
  reserve(from: string, now: number): number | undefined {
    return this.#schedule(from)?.reserve(now);
  }

  /** Makes one attempt at a message, in the order the attempts started. */
  inTurn(messageId: string, attempt: Attempt): Promise<JobOutcome | undefined> {
    // Each delivery under way is a participant: the outcomes commit once every one has written or ended.
    return this.#outcomes.participate(() => this.#deliver(messageId, attempt));
  }

  async #deliver(messageId: string, attempt: Attempt): Promise<JobOutcome | undefined> {
    const prepared = await this.#prepare(messageId, attempt);
    if (prepared.kind === "handled") return; // already handled by an earlier run, or by a receipt
    const { message } = prepared;
    if (prepared.kind === "email") return this.#deliverEmail(message, attempt);
    if (prepared.kind === "no sender") return this.statuses.fail(message, { status: "failed", reason: "no SmsSender adapter is configured" });
    if (prepared.kind === "later") throw new RunLaterError(prepared.at, `the sender ${message.from} sends ${this.#rate(message.from)} texts a second`);
    const { earlierAttemptAt, sending } = prepared;
    try {
      const sent = await sending;
      // With the outcomes of the texts answered beside it, and its job's end: one commit for them all.
      await this.statuses.move(message, { status: "sent", providerMessageId: sent?.providerMessageId }, (update) =>
        this.#outcomes.run(async (group) => {
          const moved = await update();
          if (moved) await attempt.markDone?.(group);
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
        return this.statuses.fail(message, { status: "failed", reason, errorCode: failure?.providerCode, optedOut: failure?.kind === "opted_out" });
      }
      // The reason stays for `outbox list` while the message waits for its next attempt.
      await this.messages.update(message.id, { reason, ...(mayHaveSent ? {} : { inFlightSince: earlierAttemptAt }), updatedAt: this.clock.now() });
      attempt.logger.warn("sending failed; will retry", { messageId: message.id, reason, errorCode: failure?.providerCode });
      throw error;
    }
  }

  /** What the batch this delivery starts in makes of it: batches run one after the other, each with the deliveries started meanwhile. */
  #prepare(messageId: string, attempt: Attempt): Promise<Prepared> {
    return new Promise<Prepared>((settle, fail) => {
      this.#waiting.push({ messageId, attempt, settle, fail });
      if (this.#preparing) return;
      this.#preparing = true;
      // Once the caller's synchronous run is over: the deliveries started with it (a wake's jobs) join the
      // batch, and those started while a batch is read and marked form the next.
      queueMicrotask(async () => {
        while (this.#waiting.length > 0) {
          const batch = this.#waiting.splice(0);
          // A failed read or mark fails the deliveries of the batch not yet settled: their jobs retry.
          await this.#prepareBatch(batch).catch((error: unknown) => batch.forEach((waiting) => waiting.fail(error)));
        }
        this.#preparing = false;
      });
    });
  }

  /**
   * One read of the batch's messages; each text decided in the order its delivery started (a text held
   * back sends every later one of its sender behind it: SenderSchedule); one write marking those that go
   * in flight, committed before they leave (if the process dies before an outcome is recorded, the next
   * attempt knows), in the commit of the outcomes asked meanwhile (a commit less per batch under load);
   * then each handed to its sender's queue, in order.
   */
  async #prepareBatch(batch: readonly Waiting[]): Promise<void> {
    const found = await this.messages.find({ where: { id: { in: batch.map((waiting) => waiting.messageId) } }, limit: batch.length });
    const messages = new Map(found.items.map((message) => [message.id, message]));
    const sender = this.sms();
    const going: Array<{ waiting: Waiting; message: OutboxMessage }> = [];
    for (const waiting of batch) {
      const message = messages.get(waiting.messageId);
      if (!message || message.status !== "queued") waiting.settle({ kind: "handled" });
      // Emails keep no order with texts and go their own way: marked in flight alone, never sent again when in doubt.
      else if (channelOf(message) === "email") waiting.settle({ kind: "email", message });
      else if (!sender) waiting.settle({ kind: "no sender", message });
      else {
        const later = waiting.attempt.dueAt === undefined ? undefined : this.#schedule(message.from)?.holdBack(this.clock.now(), message.id);
        if (later !== undefined) waiting.settle({ kind: "later", message, at: later });
        else going.push({ waiting, message });
      }
    }
    if (going.length === 0 || !sender) return;
    const now = this.clock.now();
    await this.#outcomes.run(async () => {
      for (const { message } of going) await this.messages.update(message.id, { attempts: message.attempts + 1, inFlightSince: message.inFlightSince ?? now, updatedAt: now });
    });
    for (const { waiting, message } of going) {
      const earlierAttemptAt = message.inFlightSince;
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
      waiting.settle({ kind: "sending", message, earlierAttemptAt, sending });
    }
  }

  async #deliverEmail(message: OutboxMessage, attempt: Attempt): Promise<JobOutcome | undefined> {
    const sender = this.email();
    if (!sender) return this.statuses.fail(message, { status: "failed", reason: "no EmailSender adapter is configured" });
    if (message.inFlightSince !== undefined) {
      const reason = "in doubt: an earlier attempt may have handed this email over before the process stopped; not sent again, so that it is never sent twice";
      return this.statuses.fail(message, { status: "failed", reason, errorCode: "in_doubt" });
    }
    // Committed before the email leaves: should the process die before the outcome is recorded, the next attempt knows.
    await this.messages.update(message.id, { attempts: message.attempts + 1, inFlightSince: this.clock.now(), updatedAt: this.clock.now() });
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
      await this.statuses.move(message, { status: "sent", providerMessageId: sent.providerMessageId });
      return { messageId: message.id, status: "sent" };
    } catch (error) {
      const failure = error instanceof EmailSendError ? error : undefined;
      const reason = error instanceof Error ? error.message : String(error);
      if (!(failure?.retryable ?? true) || attempt.final) return this.statuses.fail(message, { status: "failed", reason, errorCode: failure?.providerCode });
      // An error the adapter does not explain may have come after the message left.
      await this.messages.update(message.id, { reason, ...(failure && !failure.mayHaveSent ? { inFlightSince: undefined } : {}), updatedAt: this.clock.now() });
      attempt.logger.warn("sending failed; will retry", { messageId: message.id, reason });
      throw error;
    }
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
