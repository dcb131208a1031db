import {
  CLOCK,
  GatheredWrites,
  GroupCommit,
  inject,
  injectable,
  JOBS,
  nextDueAt,
  RowDrains,
  STORAGE,
  type Clock,
  type JobContext,
  type JobOutcome,
  type Jobs,
  type Retries,
  type Storage,
} from "../../src/index.ts";
import type { AttemptResult, DeliverySender } from "./delivery-sender.ts";
import type { DeliveryMark, DeliveryRows } from "./delivery-rows.ts";
import type { DeliveryOutcomeRow, DeliveryRecord, DeliveryStatus, DueDelivery, WebhookRecord } from "./records.ts";
import { ReceiverLanes } from "./receiver-lanes.ts";
import { MAX_DELIVERY_ATTEMPTS, retryDelayMs } from "./retry-schedule.ts";
import { signatureHeaders } from "./signing.ts";
import type { SigningKeys } from "./signing-keys.ts";
import { WEBHOOK_DELIVERY_ROWS, WEBHOOK_REGISTRY, WEBHOOK_SENDER, WEBHOOK_SIGNING_KEYS, WEBHOOKS_SETTINGS, type WebhooksSettings } from "./tokens.ts";
import type { WebhookRegistry } from "./webhook-registry.ts";

/** The job that sends one webhook's pending deliveries, one live per webhook. */
export const DRAIN_JOB = "webhooks.drain";
/**
 * The drains' own job slots: how many webhooks' drains start at once. A drain gives its slot back as
 * soon as it runs (it waits on its receiver), so a slow receiver holds none.
 */
export const DRAIN_SLOTS = 32;

export interface WebhookDrainPayload {
  webhookId: string;
}

/** One live drain per webhook, across processes. */
export const webhookDrainKey = (payload: WebhookDrainPayload): string => `webhook-drain:${payload.webhookId}`;

/**
 * How long the outcomes gather before they are written, and the most written at once: a few hundred deliveries'
 * at full speed, a few statements and one commit for them all, a wait no receiver sees (its answer came already).
 * A commit has a cost of its own (the pages it writes to the WAL): in bench/webhooks.ts the kit delivered 7,849/s
 * with 40 ms against 6,663 with 10 ms (medians of twelve rounds each, alternated, 2026-11-27). A crash loses at most
 * these outcomes: their deliveries are sent again, with the same `webhook-id`.
 */
const OUTCOME_GATHER_MS = 40;
const OUTCOMES_PER_WRITE = 512;

/** How long a drain waits after an attempt's outcome could not be stored (its delivery still due) before it sends again. */
const UNRECORDED_RETRY_MS = 60_000;

export type DeliveryOutcome = "delivered" | "failed" | "retrying" | "cancelled" | "interrupted" | "unrecorded";
const DELIVERY_OUTCOMES: readonly DeliveryOutcome[] = ["delivered", "failed", "retrying", "cancelled", "interrupted", "unrecorded"];

/** The documented schedule (retry-schedule.ts), not the jobs' backoff. */
const DELIVERY_RETRIES: Retries = { maxAttempts: MAX_DELIVERY_ATTEMPTS, backoffMs: (attempt) => retryDelayMs(attempt) };

/** Signs a delivery when it leaves (receivers check webhook-timestamp against their clock) and POSTs it once. */
export function postSigned(sender: DeliverySender, clock: Clock, webhook: WebhookRecord, delivery: Pick<DeliveryRecord, "id" | "body">, keys: readonly string[], stop?: AbortSignal): Promise<AttemptResult> {
  const headers = signatureHeaders(keys, delivery.id, Math.floor(clock.now() / 1000), delivery.body);
  return sender.post(webhook.url, delivery.body, headers, stop);
}

/**
 * The webhooks' drains (RowDrains over the deliveries' due rows): one job per webhook sends its pending deliveries in (dueAt, id)
 * order, at most `concurrencyPerReceiver` requests out at once, reading the next page while they are.
 * A page's deliveries are not marked in flight in storage: the drain knows which it has out (one live drain
 * per webhook), and a crash sends them again at the next start, which at-least-once delivery with one
 * `webhook-id` allows (receivers deduplicate by it). An outcome that could not be stored stops the drain
 * for a minute instead of sending its delivery again at once. The outcomes of the requests answered within
 * OUTCOME_GATHER_MS are written together in one transaction (DeliveryRows.mark: small due rows deleted, outcome rows
 * inserted); a webhook's own change (failing, delivered again, disabled) beside
 * them, in a GroupCommit without savepoints (each is one statement, or a few whose partial effect is harmless: a
 * webhook marked failing whose delivery's outcome then failed is tried again when due). A slow or dead receiver
 * holds its own drain only: its requests wait, every other webhook's drain goes on, and no job slot is held while
 * they do.
 *
 * Its members are TypeScript-`private`, not `#private`: tsx turns those of a decorated class into WeakMap lookups.
 */
@injectable()
export class WebhookDrains {
  /** The webhooks' own changes, and the cancellations of a disabled webhook's deliveries, asked together: one commit for them all. */
  private readonly webhookWrites: GroupCommit;
  private readonly drains: RowDrains<DueDelivery, WebhookDrainPayload, DeliveryOutcome>;
  private readonly lanes: ReceiverLanes;
  /** The attempts' marks asked within OUTCOME_GATHER_MS, written in one transaction. */
  private readonly settled = new GatheredWrites<DeliveryMark>((marks) => this.rows.mark(marks, { paged: true }), OUTCOME_GATHER_MS, OUTCOMES_PER_WRITE);

  constructor(
    @inject(STORAGE) storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(JOBS) jobs: Jobs,
    @inject(WEBHOOK_REGISTRY) private readonly registry: WebhookRegistry,
    @inject(WEBHOOK_SIGNING_KEYS) private readonly signingKeys: SigningKeys,
    @inject(WEBHOOK_SENDER) private readonly sender: DeliverySender,
    @inject(WEBHOOKS_SETTINGS) private readonly settings: WebhooksSettings,
    @inject(WEBHOOK_DELIVERY_ROWS) private readonly rows: DeliveryRows,
  ) {
    this.webhookWrites = new GroupCommit(storage, { savepoints: false, gatherMs: OUTCOME_GATHER_MS });
    this.lanes = new ReceiverLanes(settings.concurrencyPerReceiver);
    this.drains = new RowDrains(
      {
        jobType: DRAIN_JOB,
        rows: this.rows.due,
        keyOf: webhookDrainKey,
        payloadOf: (delivery) => ({ webhookId: delivery.webhookId }),
        drainField: "webhookId",
        drainValue: (payload) => payload.webhookId,
        // No `inFlight`: attempts leave no mark in storage (an earlier version's marks were made due at once by the migration).
        unrecorded: { outcome: "unrecorded", retryAfterMs: UNRECORDED_RETRY_MS },
        outcomes: DELIVERY_OUTCOMES,
        // A read's own cost (its statement, cursor and where) is shared by its rows: pages of eight turns of requests make it a small part of a delivery's.
        pageSize: settings.concurrencyPerReceiver * 8,
        // A webhook's deliveries before their first attempt have no due row: read from the deliveries, after its cursor.
        fresh: this.rows.firstAttempts,
        roomFor: (payload) => this.lanes.roomFor(payload.webhookId),
        start: (page, payload, context) => this.start(page, payload, context),
        describe: (payload) => ({ webhookId: payload.webhookId }),
      },
      storage,
      clock,
      jobs,
    );
    // As RowDrains does for due rows: a delivery is never left after its webhook's cursor without a drain.
    jobs.whenStarting(async () => {
      for (const { webhookId, since } of await this.rows.firstAttempts.waiting()) await storage.transaction(() => this.arm(webhookId, since));
    });
  }

  /** In the transaction that stored a pending delivery of `webhookId`, due at `dueAt`: its drain runs by then. */
  arm(webhookId: string, dueAt: number): Promise<void> {
    return this.drains.arm({ webhookId }, dueAt);
  }

  /** The drain job's handler. */
  drain(payload: WebhookDrainPayload, context: JobContext): Promise<JobOutcome> {
    return this.drains.drain(payload, context);
  }

  private async start(page: readonly DueDelivery[], payload: WebhookDrainPayload, context: JobContext): Promise<Array<Promise<DeliveryOutcome>>> {
    const webhook = await this.registry.forDelivery(payload.webhookId);
    if (!webhook || webhook.disabledAt !== undefined) {
      const error = webhook ? `the webhook is disabled: ${webhook.disabledReason ?? ""}` : "the webhook was deleted";
      await this.webhookWrites.run(() => this.cancel(page, error));
      return page.map(() => Promise.resolve("cancelled" as const));
    }
    const keys = await this.signingKeys.signingKeys(webhook.applicationId);
    return page.map((due) => this.attempt(due, webhook, keys, context));
  }

  /** A disabled or deleted webhook's pending deliveries leave the queue, cancelled (their last attempt's record kept). */
  private async cancel(page: readonly DueDelivery[], error: string): Promise<void> {
    const now = this.clock.now();
    const outcomes = await this.rows.byId(this.rows.outcomes, page.map((due) => due.id));
    await this.rows.mark(
      page.map((due) => ({
        id: due.id,
        due: null,
        outcome: { ...outcomes.get(due.id), id: due.id, webhookId: due.webhookId, attempts: due.attempts, status: "cancelled", error, updatedAt: now },
        first: due.first ? due : undefined,
      })),
    );
  }

  /**
   * One attempt at `delivery` once its receiver's lane has a slot, and its outcome written with those of the attempts
   * answered beside it (DeliveryRows.mark), and the webhook's own change (failing, delivered again, disabled) beside
   * them when it has one. One async method rather than a chain of callbacks: fewer promises and closures a delivery.
   */
  private async attempt(delivery: DueDelivery, webhook: WebhookRecord, keys: readonly string[], context: JobContext): Promise<DeliveryOutcome> {
    try {
      const slot = this.lanes.acquire(webhook.id);
      if (slot !== undefined) await slot;
      let result: AttemptResult;
      try {
        result = await postSigned(this.sender, this.clock, webhook, delivery, keys, context.signal);
      } finally {
        this.lanes.release(webhook.id);
      }
      const { outcome, mark, webhookChange } = this.outcomeOf(delivery, webhook, result, context.signal.aborted, this.clock.now());
      if (mark === undefined) return outcome;
      const settled = this.settled.write(mark);
      if (webhookChange === undefined) await settled;
      else await Promise.all([settled, this.webhookWrites.run(webhookChange)]);
      return outcome;
    } catch (error) {
      context.logger.error("a delivery's outcome could not be recorded; it is tried again when due", { deliveryId: delivery.id, error });
      return "unrecorded";
    }
  }

  /** What an attempt's answer makes of its delivery, and of its webhook if anything. */
  private outcomeOf(delivery: DueDelivery, webhook: WebhookRecord, result: AttemptResult, stopped: boolean, now: number): { outcome: DeliveryOutcome; mark?: DeliveryMark; webhookChange?: () => Promise<void> } {
    const { id } = delivery;
    // The kit stopped during the request: due at once after the restart, the attempt not counted.
    // Before its first attempt, a delivery needs no mark: it stays after its webhook's cursor.
    if (stopped && !result.delivered) return delivery.first ? { outcome: "interrupted" } : { outcome: "interrupted", mark: { id, due: { dueAt: now, attempts: delivery.attempts } } };
    const first = delivery.first ? delivery : undefined;
    if (result.delivered) {
      const webhookChange = webhook.failingSince === undefined ? undefined : () => this.registry.delivered(webhook);
      return { outcome: "delivered", mark: { id, due: null, outcome: attemptOutcome(delivery, result, now, "delivered"), first }, webhookChange };
    }
    const failingSince = webhook.failingSince ?? now;
    const disableFor =
      result.status === 410
        ? "the receiver answered 410 Gone"
        : now - failingSince >= this.settings.disableAfterFailingMs
          ? `every attempt failed since ${new Date(failingSince).toISOString()}`
          : undefined;
    const webhookChange = async () => {
      await this.registry.failing(webhook, failingSince);
      if (disableFor !== undefined) await this.registry.disable(webhook, disableFor);
    };
    const dueAt = disableFor === undefined ? nextDueAt(DELIVERY_RETRIES, delivery.attempts + 1, now) : undefined;
    if (dueAt === undefined) return { outcome: "failed", mark: { id, due: null, outcome: attemptOutcome(delivery, result, now, "failed"), first }, webhookChange };
    return { outcome: "retrying", mark: { id, due: { dueAt, attempts: delivery.attempts + 1 }, outcome: attemptOutcome(delivery, result, now, "pending"), first }, webhookChange };
  }
}

/** What an attempt writes in the delivery log: its delivery's outcome row, the delivery then `status`. */
export function attemptOutcome(delivery: Pick<DeliveryRecord, "id" | "webhookId" | "attempts">, result: AttemptResult, now: number, status: DeliveryStatus): DeliveryOutcomeRow {
  const outcome: DeliveryOutcomeRow = { id: delivery.id, webhookId: delivery.webhookId, status, attempts: delivery.attempts + 1, lastAttemptAt: now, latencyMs: result.latencyMs, updatedAt: now };
  if (result.status !== undefined) outcome.responseStatus = result.status;
  if (result.responseBody !== undefined) outcome.responseBody = result.responseBody;
  if (result.error !== undefined) outcome.error = result.error;
  return outcome;
}
