import { setImmediate as nextTurn } from "node:timers/promises";
import PQueue from "p-queue";
import { BatchWrite, GroupCommit } from "../kernel/group-commit.ts";
import type { Retries } from "../jobs/jobs.ts";
import { nextDueAt } from "../jobs/row-drains.ts";
import type { Clock } from "../ports/clock.ts";
import { EmailSendError, type EmailSender } from "../ports/email-sender.ts";
import type { Logger } from "../ports/logger.ts";
import { SmsSendError, type SmsSender } from "../ports/sms-sender.ts";
import type { Collection, Patch, Storage } from "../ports/storage.ts";
import type { MessageStatuses, StatusChange } from "./message-statuses.ts";
import type { MessagingSettings } from "./outbox.ts";
import { channelOf, type OutboxMessage } from "./outbox-record.ts";

/**
 * How long after an attempt starts its message falls due again: should the process die before the
 * outcome is recorded, the drain after it tries again then (a text asks the provider first; an email in
 * doubt fails). `sendNow` leaves its message due this long after its own attempt.
 */
export const IN_FLIGHT_RECHECK_MS = 60_000;

/** At most this many messages of a page are handed to their sender in one turn of the event loop (`start`). */
export const STARTS_PER_TURN = 16;

/** What became of one attempt: the message went, failed, waits for its next attempt, or its outcome could not be stored. */
export type AttemptOutcome = "sent" | "failed" | "retrying" | "unrecorded";

/** How a page of messages is attempted. */
export interface PageAttempt {
  logger: Logger;
  /**
   * A retryable failure leaves the message due when its in-flight mark made it (`sendNow`: its drain
   * retries it a minute later), instead of after the jobs' backoff.
   */
  keepDueAt?: boolean;
}

/**
 * The outbox's delivery path: attempts at stored messages through the
 * SmsSender or EmailSender port. The messages of a page (its sender's due
 * messages, read by the drain) are marked in flight in one write, committed
 * before any of them leaves, then handed to their sender's queue in order: at
 * most `ratePerSecond` texts a second and `sendsAtOnce` waiting on the provider
 * per sender. The outcomes of the messages answered together commit in one
 * transaction, with the in-flight marks of the pages started meanwhile. A
 * retryable failure leaves the message queued, due after the jobs' backoff,
 * until its last attempt (the jobs' `maxAttempts`).
 */
export class OutboxDeliveries {
  readonly #queues = new Map<string, PQueue>();
  /** The outcomes and in-flight marks asked together: a commit for them all. */
  readonly #outcomes: GroupCommit;
  /** The failed attempts of a group that wait for their next: one statement for those that write the same. */
  readonly #retries = new BatchWrite<Retry, void>((retries) => this.#writeRetries(retries));

  constructor(
    private readonly messages: Collection<OutboxMessage>,
    storage: Storage,
    private readonly clock: Clock,
    private readonly sms: () => SmsSender | undefined,
    private readonly email: () => EmailSender | undefined,
    private readonly settings: MessagingSettings,
    private readonly statuses: MessageStatuses,
    private readonly retries: Retries,
  ) {
    if (!Number.isSafeInteger(settings.sendsAtOnce) || settings.sendsAtOnce < 1) {
      throw new RangeError(`messaging.sendsAtOnce must be a whole number of at least 1, got ${String(settings.sendsAtOnce)}`);
    }
    this.#outcomes = new GroupCommit(storage);
  }

  /**
   * Settles once the sender's queue has room for another page (fewer than `sendsAtOnce` messages waiting their
   * turn), in a turn of the event loop of its own: on storage that answers without I/O, with a provider that
   * answers at once, a drain's pages would otherwise follow each other in one chain of promises, holding the
   * loop (and every request of the host) for dozens of pages. Before the page's read, not after it: the texts
   * answered meanwhile commit with the page's in-flight mark.
   */
  async roomFor(message: Pick<OutboxMessage, "channel" | "from">): Promise<void> {
    await this.#queue(message).onSizeLessThan(this.settings.sendsAtOnce);
    await nextTurn();
  }

  /** How many messages a drain reads at a time. */
  get pageSize(): number {
    return this.settings.sendsAtOnce * 2;
  }

  /**
   * Makes one attempt at each queued message of `page` (one sender's, in order): resolves once they are
   * marked in flight and handed to their sender, with one promise per message (in the page's order) that
   * settles (never rejects) once its outcome is committed.
   *
   * It hands over at most {@link STARTS_PER_TURN} messages a turn of the event loop (see `roomFor`).
   */
  async start(page: readonly OutboxMessage[], attempt: PageAttempt): Promise<Array<Promise<AttemptOutcome>>> {
    const refusals = page.map((message) => this.#refusal(message));
    const going = page.filter((_, index) => refusals[index] === undefined);
    const now = this.clock.now();
    const dueAt = now + IN_FLIGHT_RECHECK_MS;
    // One statement per (attempts, earlier attempt or not) among them: almost always one.
    if (going.length > 0) {
      await this.#outcomes.run(async () => {
        for (const [[attempts, earlier], ids] of groupBy(going, (message) => [message.attempts, message.inFlightSince !== undefined] as const)) {
          const patch: Patch<OutboxMessage> = { attempts: attempts + 1, dueAt, updatedAt: now, ...(earlier ? {} : { inFlightSince: now }) };
          await this.messages.updateWhere({ id: { in: ids }, status: "queued" }, patch);
        }
      });
    }
    const settled: Array<Promise<AttemptOutcome>> = [];
    for (const [index, message] of page.entries()) {
      if (index > 0 && index % STARTS_PER_TURN === 0) await nextTurn();
      const refusal = refusals[index];
      if (refusal) {
        settled.push(this.#settle(() => this.#fail(message, refusal), attempt));
        continue;
      }
      const marked: OutboxMessage = { ...message, attempts: message.attempts + 1, dueAt, inFlightSince: message.inFlightSince ?? now };
      settled.push(this.#settle(() => (channelOf(message) === "email" ? this.#sendEmail(message, marked, attempt) : this.#sendText(message, marked, attempt)), attempt));
    }
    return settled;
  }

  /** Why `message` fails without an attempt (no adapter for its channel; an email in doubt), if it does. */
  #refusal(message: OutboxMessage): StatusChange | undefined {
    const missing = channelOf(message) === "email" ? (this.email() ? undefined : "EmailSender") : this.sms() ? undefined : "SmsSender";
    if (missing) return { status: "failed", reason: `no ${missing} adapter is configured` };
    if (channelOf(message) === "email" && message.inFlightSince !== undefined) {
      const reason = "in doubt: an earlier attempt may have handed this email over before the process stopped; not sent again, so that it is never sent twice";
      return { status: "failed", reason, errorCode: "in_doubt" };
    }
    return undefined;
  }

  /** Runs one message's attempt as a participant of the outcomes' group; a failure to record it is logged, its message stays due. */
  #settle(work: () => Promise<AttemptOutcome>, attempt: PageAttempt): Promise<AttemptOutcome> {
    return this.#outcomes.participate(work).catch((error: unknown) => {
      attempt.logger.error("a message's outcome could not be recorded; it is tried again when due", { error });
      return "unrecorded" as const;
    });
  }

  async #fail(message: OutboxMessage, change: Parameters<MessageStatuses["fail"]>[1]): Promise<AttemptOutcome> {
    await this.statuses.fail(message, change);
    return "failed";
  }

  async #sendText(message: OutboxMessage, marked: OutboxMessage, attempt: PageAttempt): Promise<AttemptOutcome> {
    const sender = this.sms()!;
    const earlierAttemptAt = message.inFlightSince;
    try {
      const sent = await this.#queue(message).add(() =>
        sender.send({
          from: message.from,
          to: message.to,
          body: message.body,
          ...(message.mediaUrl !== undefined ? { mediaUrl: message.mediaUrl } : {}),
          idempotencyKey: message.id,
          ...(earlierAttemptAt !== undefined ? { earlierAttemptAt } : {}),
        }),
      );
      await this.statuses.taken(marked, sent?.providerMessageId, sender.receiptsCarryMessageId !== true, this.#outcomes);
      return "sent";
    } catch (error) {
      const failure = error instanceof SmsSendError ? error : undefined;
      // An error the adapter does not explain may have come after the request left.
      const mayHaveSent = failure?.mayHaveSent ?? true;
      return this.#failed(marked, error, { retryable: failure?.retryable ?? true, mayHaveSent, providerCode: failure?.providerCode, optedOut: failure?.kind === "opted_out" }, attempt);
    }
  }

  async #sendEmail(message: OutboxMessage, marked: OutboxMessage, attempt: PageAttempt): Promise<AttemptOutcome> {
    const sender = this.email()!;
    try {
      const sent = await this.#queue(message).add(() =>
        sender.send({
          from: message.from,
          to: message.to,
          subject: message.subject ?? "",
          text: message.body,
          ...(message.html !== undefined ? { html: message.html } : {}),
          ...(message.headers ? { headers: message.headers } : {}),
          idempotencyKey: message.id,
        }),
      );
      // The email port has no receipts; a receipt applied by hand may still name an email by the provider's id.
      await this.statuses.taken(marked, sent.providerMessageId, true, this.#outcomes);
      return "sent";
    } catch (error) {
      const failure = error instanceof EmailSendError ? error : undefined;
      // An error the adapter does not explain may have come after the message left: it stays in doubt.
      return this.#failed(marked, error, { retryable: failure?.retryable ?? true, mayHaveSent: !failure || failure.mayHaveSent, providerCode: failure?.providerCode, optedOut: false }, attempt);
    }
  }

  /** A failed attempt: the message fails (not retryable, or its last attempt), or waits for its next attempt. */
  async #failed(
    marked: OutboxMessage,
    error: unknown,
    failure: { retryable: boolean; mayHaveSent: boolean; providerCode: string | undefined; optedOut: boolean },
    attempt: PageAttempt,
  ): Promise<AttemptOutcome> {
    const reason = error instanceof Error ? error.message : String(error);
    const now = this.clock.now();
    const nextAttemptAt = failure.retryable ? nextDueAt(this.retries, marked.attempts, now) : undefined;
    if (nextAttemptAt === undefined) {
      return this.#fail(marked, { status: "failed", reason, errorCode: failure.providerCode, optedOut: failure.optedOut });
    }
    // The reason stays for `outbox list` while the message waits for its next attempt.
    const patch: Patch<OutboxMessage> = { reason, updatedAt: now, ...(failure.mayHaveSent ? {} : { inFlightSince: undefined }) };
    if (!attempt.keepDueAt) patch.dueAt = nextAttemptAt;
    await this.#outcomes.runBatched(this.#retries, { id: marked.id, patch });
    attempt.logger.warn("sending failed; will retry", { messageId: marked.id, reason, errorCode: failure.providerCode, dueAt: new Date(patch.dueAt ?? marked.dueAt!).toISOString() });
    return "retrying";
  }

  /** Each patch once, on every message still queued that it is for. */
  async #writeRetries(retries: readonly Retry[]): Promise<void[]> {
    const groups = new Map<string, { patch: Patch<OutboxMessage>; ids: string[] }>();
    for (const { id, patch } of retries) {
      // The fields it removes count: JSON leaves them out.
      const key = `${Object.keys(patch).join()} ${JSON.stringify(patch)}`;
      const same = groups.get(key);
      if (same) same.ids.push(id);
      else groups.set(key, { patch, ids: [id] });
    }
    for (const same of groups.values()) await this.messages.updateWhere({ id: { in: same.ids }, status: "queued" }, same.patch);
    return retries.map(() => undefined);
  }

  /** The sender's queue: its rate (texts) and `sendsAtOnce`. */
  #queue(message: Pick<OutboxMessage, "channel" | "from">): PQueue {
    const name = `${channelOf(message as OutboxMessage)}:${message.from}`;
    let queue = this.#queues.get(name);
    if (!queue) {
      const rate = channelOf(message as OutboxMessage) === "email" ? Infinity : (this.settings.ratePerSecondBySender[message.from] ?? this.settings.ratePerSecond);
      // Strict: a sliding window, so no second ever holds more than `rate` sends (a fixed window lets two bursts meet at its edge).
      const { sendsAtOnce: concurrency } = this.settings;
      // A rate under one a second is one text per longer window.
      const perWindow = Math.max(1, Math.floor(rate));
      queue = Number.isFinite(rate) ? new PQueue({ concurrency, intervalCap: perWindow, interval: (perWindow / rate) * 1000, strict: true }) : new PQueue({ concurrency });
      this.#queues.set(name, queue);
    }
    return queue;
  }
}

/** A failed attempt's write: its message waits for its next attempt. */
interface Retry {
  id: string;
  patch: Patch<OutboxMessage>;
}

/** `items` grouped by a key of two parts, in order of first appearance, each group as its ids. */
function groupBy<K extends readonly [unknown, unknown]>(items: readonly OutboxMessage[], keyOf: (item: OutboxMessage) => K): Array<[K, string[]]> {
  const groups = new Map<string, [K, string[]]>();
  for (const item of items) {
    const key = keyOf(item);
    const name = JSON.stringify(key);
    const group = groups.get(name);
    if (group) group[1].push(item.id);
    else groups.set(name, [key, [item.id]]);
  }
  return [...groups.values()];
}
