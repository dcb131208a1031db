import PQueue from "p-queue";
import { GroupCommit } from "../kernel/group-commit.ts";
import { RunLaterError } from "../jobs/job-record.ts";
import type { JobOutcome } from "../jobs/job-definition.ts";
import type { Clock } from "../ports/clock.ts";
import { EmailSendError, type EmailSender } from "../ports/email-sender.ts";
import type { Logger } from "../ports/logger.ts";
import { SmsSendError, type SmsSender } from "../ports/sms-sender.ts";
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
  /** Marks its job done, with the outcome it commits; absent outside a job. */
  markDone?: () => Promise<void>;
  logger: Logger;
}

/**
 * The outbox's delivery path: one attempt at a stored message through the
 * SmsSender or EmailSender port. Texts leave in the order their jobs were
 * claimed, at most `ratePerSecond` a second and `sendsAtOnce` waiting on the
 * provider per sender number; each is marked in flight (committed) before it
 * leaves, and the outcomes of the texts answered together commit in one
 * transaction with their jobs' done marks.
 */
export class OutboxDeliveries {
  readonly #limiters = new Map<string, PQueue>();
  /** When each sender number's texts may go out (none with an infinite rate). */
  readonly #schedules = new Map<string, SenderSchedule>();
  /** Settles when the delivery started last has handed its text to its sender's queue (or given up). */
  #lastHandOff: Promise<void> = Promise.resolve();
  /** The outcomes of the deliveries answered together, with their jobs' ends: a commit for them all. */
  readonly #outcomes: GroupCommit;

  constructor(
    private readonly messages: Collection<OutboxMessage>,
    storage: Storage,
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
  async inTurn(messageId: string, attempt: Attempt): Promise<JobOutcome | undefined> {
    // Deliveries hand their texts to the senders' queues in the order they started, which is the order
    // their jobs were claimed (due time, then creation): a booking confirmation queued before a
    // cancellation is sent before it, even when the storage's round trips finish out of order.
    const previousHandOff = this.#lastHandOff;
    let handOff!: () => void;
    const ownHandOff = new Promise<void>((resolve) => (handOff = resolve));
    // A delivery that ends without sending still passes the turn on only after the ones before it.
    this.#lastHandOff = previousHandOff.then(() => ownHandOff);
    // Each delivery under way is a participant: the outcomes commit once every one has written or ended.
    return this.#outcomes.participate(async () => {
      try {
        return await this.#deliver(messageId, attempt, { previous: previousHandOff, handedOff: handOff });
      } finally {
        handOff();
      }
    });
  }

  async #deliver(messageId: string, attempt: Attempt, turn: { previous: Promise<void>; handedOff: () => void }): Promise<JobOutcome | undefined> {
    const message = await this.messages.get(messageId);
    if (!message || message.status !== "queued") return; // already handled by an earlier run, or by a receipt
    if (channelOf(message) === "email") {
      // Emails keep no order with texts: the texts after this one need not wait for it.
      turn.handedOff();
      return this.#deliverEmail(message, attempt);
    }
    const sender = this.sms();
    if (!sender) return this.statuses.fail(message, { status: "failed", reason: "no SmsSender adapter is configured" });
    await turn.previous;
    // Decided in turn: a text held back sends every later one of its sender behind it (SenderSchedule).
    const later = attempt.dueAt === undefined ? undefined : this.#schedule(message.from)?.holdBack(this.clock.now(), message.id);
    if (later !== undefined) throw new RunLaterError(later, `the sender ${message.from} sends ${this.#rate(message.from)} texts a second`);
    const earlierAttemptAt = message.inFlightSince;
    // Committed before the text leaves: if the process dies before the outcome is recorded, the next attempt knows.
    await this.messages.update(message.id, { attempts: message.attempts + 1, inFlightSince: earlierAttemptAt ?? this.clock.now(), updatedAt: this.clock.now() });
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
      await this.statuses.move(message, { status: "sent", providerMessageId: sent?.providerMessageId }, (update) =>
        this.#outcomes.run(async () => {
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
        return this.statuses.fail(message, { status: "failed", reason, errorCode: failure?.providerCode, optedOut: failure?.kind === "opted_out" });
      }
      // The reason stays for `outbox list` while the message waits for its next attempt.
      await this.messages.update(message.id, { reason, ...(mayHaveSent ? {} : { inFlightSince: earlierAttemptAt }), updatedAt: this.clock.now() });
      attempt.logger.warn("sending failed; will retry", { messageId: message.id, reason, errorCode: failure?.providerCode });
      throw error;
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
