import type { EventBus } from "../events/event-bus.ts";
import { BatchWrite, type GroupCommit } from "../kernel/group-commit.ts";
import type { JobOutcome } from "../jobs/job-definition.ts";
import type { Clock } from "../ports/clock.ts";
import type { Logger } from "../ports/logger.ts";
import type { Collection, Patch, Storage } from "../ports/storage.ts";
import { nextDeliveryStatus, type DeliveryReceipt, type DeliveryStatus, type ReportedStatus } from "./delivery-status.ts";
import { channelOf, type OutboxMessage, type OutboxStatus } from "./outbox-record.ts";

/** How a message's status moves, with what the provider said. */
export interface StatusChange {
  status: ReportedStatus;
  providerMessageId?: string;
  /** The provider's id as the message's receipt key (OutboxMessage.receiptKey), when receipts may look it up by it. */
  receiptKey?: string;
  errorCode?: string;
  reason?: string;
  optedOut?: boolean;
}

/** Runs a message's update in a transaction: its own, or the one the caller is in. */
type StatusWrite = (update: () => Promise<OutboxMessage | undefined>) => Promise<OutboxMessage | undefined>;

/** A message its provider took (queued, its attempt in flight), with the provider's id for it. */
interface Taken {
  message: OutboxMessage;
  providerMessageId: string | undefined;
  /** Whether its receipts may come without its id: the provider's id is then its receipt key too. */
  keyed: boolean;
}

/** Inside the caller's transaction. */
const inTransaction: StatusWrite = (update) => update();

/**
 * The outbox's status path: a message moves forward only (queued → sent →
 * delivered | undelivered | failed; a final status stays), by its delivery's
 * outcome or a provider's receipt, and each move is announced as
 * `message.status_changed` in the move's transaction.
 */
export class MessageStatuses {
  /** The moves to sent of the messages whose providers answered together: one write for each, in one transaction. */
  readonly #taken = new BatchWrite<Taken, ReportedStatus | undefined>((taken) => this.#takenTogether(taken));

  constructor(
    private readonly messages: Collection<OutboxMessage>,
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly events: EventBus,
    /** Told each time a message reaches a status (the metrics count them). */
    private readonly reached: (status: OutboxStatus) => void,
  ) {}

  /**
   * Records a provider's receipt: the message moves forward (never back, a
   * final status stays) and the move is announced. A receipt for no message
   * of this outbox (another system's, or erased by a privacy request) is ignored.
   */
  async applyReceipt(receipt: DeliveryReceipt): Promise<void> {
    const message =
      receipt.messageId !== undefined
        ? await this.messages.get(receipt.messageId)
        : await this.messages.findOne({ receiptKey: receipt.providerMessageId });
    if (!message) {
      this.logger.debug("receipt for no known message", { providerMessageId: receipt.providerMessageId });
      return;
    }
    if (message.providerMessageId !== undefined && message.providerMessageId !== receipt.providerMessageId) {
      this.logger.warn("receipt names another provider message", { messageId: message.id, providerMessageId: receipt.providerMessageId });
      return;
    }
    await this.move(message, {
      status: receipt.status,
      providerMessageId: receipt.providerMessageId,
      // A receipt that overtook the send's commit is the first to tell the provider's id; the receipts after it
      // may come without the message id (a Twilio text gets a key it does not need, in that rare race only).
      ...(message.providerMessageId === undefined ? { receiptKey: receipt.providerMessageId } : {}),
      errorCode: receipt.errorCode,
      reason: receipt.errorMessage,
      optedOut: receipt.optedOut,
    });
  }

  async fail(message: OutboxMessage, change: StatusChange): Promise<JobOutcome> {
    this.logger.warn("message not sent", { messageId: message.id, companyId: message.companyId, reason: change.reason, errorCode: change.errorCode });
    await this.move(message, change);
    return { messageId: message.id, status: "failed" };
  }

  /**
   * Moves a message to a later status if it has not moved there or beyond
   * meanwhile (a receipt can overtake the send's own commit), then announces it.
   */
  async move(message: OutboxMessage, change: StatusChange): Promise<void> {
    const status = await this.#move(message, change, (update) => this.storage.transaction(update));
    if (status) this.reached(status);
  }

  /**
   * `move` to sent of a message its provider took, in `group`'s next commit: the messages taken beside it
   * move with it, in one savepoint of the group's transaction (or without one, alone in it). `keyed`: its
   * receipts may come without its id, so the provider's id becomes its receipt key.
   */
  async taken(message: OutboxMessage, providerMessageId: string | undefined, keyed: boolean, group: GroupCommit): Promise<void> {
    const status = await group.runBatched(this.#taken, { message, providerMessageId, keyed });
    if (status) this.reached(status);
  }

  /**
   * `move` of each message to sent, in the caller's transaction; returns the status each reached, if any.
   * Each is one statement: the conditional update patches the stored document in place, with no read
   * first, and the move is announced from the message as its attempt left it (its other fields do not
   * change while it is queued). One that left the queue meanwhile (a receipt overtook its send; erased)
   * is judged on what it is now.
   */
  async #takenTogether(taken: readonly Taken[]): Promise<Array<ReportedStatus | undefined>> {
    const now = this.clock.now();
    const statuses: Array<ReportedStatus | undefined> = [];
    for (const { message, providerMessageId, keyed } of taken) {
      const change: StatusChange = { status: "sent", providerMessageId, ...(keyed ? { receiptKey: providerMessageId } : {}) };
      const patch = this.#patch(message, change, "sent", now);
      if ((await this.messages.updateWhere({ id: message.id, status: "queued" }, patch)) === 1) {
        // What the announcement reads of the moved message: its fields that do not change, and these.
        await this.#announce(message, { ...message, providerMessageId: providerMessageId ?? message.providerMessageId, updatedAt: now }, change);
        statuses.push("sent");
      } else statuses.push(await this.#move(message, change, inTransaction));
    }
    return statuses;
  }

  /** `move` through `write`; returns the status reached, if any. */
  async #move(message: OutboxMessage, change: StatusChange, write: StatusWrite): Promise<ReportedStatus | undefined> {
    let current: OutboxMessage | undefined = message;
    // A concurrent move (the send's commit and a receipt) makes the conditional update miss once; read and try again.
    for (let tries = 0; current && tries < 3; tries++) {
      if (current.status === "suppressed") return undefined;
      const status = nextDeliveryStatus(current.status, change.status);
      if (!status) return undefined;
      const patch = this.#patch(current, change, status, this.clock.now());
      const before = current;
      // The event in the move's transaction: in-transaction listeners (webhook deliveries) commit with the move.
      const moved = await write(async () => {
        const updated = await this.messages.update(before.id, patch, { where: { status: before.status } });
        if (updated) await this.#announce(before, updated, change);
        return updated;
      });
      if (moved) return status;
      current = await this.messages.get(current.id);
    }
    return undefined;
  }

  /** What a move of `current` to `status` writes. */
  #patch(current: OutboxMessage, change: StatusChange, status: ReportedStatus, now: number): Patch<OutboxMessage> {
    // The reason of an earlier failed attempt goes: the reason is the new status's, if any.
    // Out of the queue: its sender's drain no longer reads it.
    const patch: Patch<OutboxMessage> = { status, reason: change.reason, updatedAt: now, inFlightSince: undefined, dueAt: undefined };
    if (change.providerMessageId !== undefined) patch.providerMessageId = change.providerMessageId;
    if (change.receiptKey !== undefined) patch.receiptKey = change.receiptKey;
    if (change.errorCode !== undefined) patch.errorCode = change.errorCode;
    if (current.sentAt === undefined && status !== "failed") patch.sentAt = now;
    if (status === "delivered") patch.deliveredAt = now;
    return patch;
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
}
