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
  type Collection,
  type IdPatch,
  type JobContext,
  type JobOutcome,
  type Jobs,
  type Patch,
  type Retries,
  type Storage,
} from "../../src/index.ts";
import type { AttemptResult, DeliverySender } from "./delivery-sender.ts";
import { DELIVERIES, type DeliveryRecord, type DeliveryStatus, type WebhookRecord } from "./records.ts";
import { ReceiverLanes } from "./receiver-lanes.ts";
import { MAX_DELIVERY_ATTEMPTS, retryDelayMs } from "./retry-schedule.ts";
import { signatureHeaders } from "./signing.ts";
import type { SigningKeys } from "./signing-keys.ts";
import { WEBHOOK_REGISTRY, WEBHOOK_SENDER, WEBHOOK_SIGNING_KEYS, WEBHOOKS_SETTINGS, type WebhooksSettings } from "./tokens.ts";
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
 * at full speed, a statement or two and (SQLite) one message to the write thread and one commit for them all, a
 * wait no receiver sees (its answer came already). A commit has a cost of its own (the pages it writes to the WAL,
 * the other connection's page cache SQLite then drops): in bench/webhooks.ts the write thread spent 29 µs a
 * delivery with 10 ms (about 70 outcomes a commit) and 20 with 40 ms (up to 512), and the kit delivered 7,849/s
 * against 6,663 (medians of twelve rounds each, alternated, 2026-11-27). A crash loses at most these outcomes:
 * their deliveries are sent again, with the same `webhook-id`.
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
export function postSigned(sender: DeliverySender, clock: Clock, webhook: WebhookRecord, delivery: DeliveryRecord, keys: readonly string[], stop?: AbortSignal): Promise<AttemptResult> {
  const headers = signatureHeaders(keys, delivery.id, Math.floor(clock.now() / 1000), delivery.body);
  return sender.post(webhook.url, delivery.body, headers, stop);
}

/**
 * The webhooks' drains (RowDrains): one job per webhook sends its pending deliveries in (dueAt, id)
 * order, at most `concurrencyPerReceiver` requests out at once, reading the next page while they are.
 * A page's deliveries are not marked in flight in storage: the drain knows which it has out (one live drain
 * per webhook), and a crash sends them again at the next start, which at-least-once delivery with one
 * `webhook-id` allows (receivers deduplicate by it). An outcome that could not be stored stops the drain
 * for a minute instead of sending its delivery again at once. The outcomes of the requests answered within
 * OUTCOME_GATHER_MS are written together, by one detached `updateEach` (UpdateEachOptions: on SQLite, from the
 * storage's write thread, off the event loop); a webhook's own change (failing, delivered again, disabled) beside
 * them, in a GroupCommit without savepoints (each is one statement, or a few whose partial effect is harmless: a
 * webhook marked failing whose delivery's outcome then failed is tried again when due). A slow or dead receiver
 * holds its own drain only: its requests wait, every other webhook's drain goes on, and no job slot is held while
 * they do.
 *
 * Its members are TypeScript-`private`, not `#private`: tsx turns those of a decorated class into WeakMap lookups.
 */
@injectable()
export class WebhookDrains {
  private readonly deliveries: Collection<DeliveryRecord>;
  /** The webhooks' own changes, and the cancellations of a disabled webhook's deliveries, asked together: one commit for them all. */
  private readonly webhookWrites: GroupCommit;
  private readonly drains: RowDrains<DeliveryRecord, WebhookDrainPayload, DeliveryOutcome>;
  private readonly lanes: ReceiverLanes;
  /** The deliveries' outcomes asked within OUTCOME_GATHER_MS, in one statement per patch shape (of up to 256 rows). */
  private readonly settled = new GatheredWrites<IdPatch<DeliveryRecord>>((outcomes) => this.deliveries.updateEach(outcomes, { detached: true }), OUTCOME_GATHER_MS, OUTCOMES_PER_WRITE);

  constructor(
    @inject(STORAGE) storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(JOBS) jobs: Jobs,
    @inject(WEBHOOK_REGISTRY) private readonly registry: WebhookRegistry,
    @inject(WEBHOOK_SIGNING_KEYS) private readonly signingKeys: SigningKeys,
    @inject(WEBHOOK_SENDER) private readonly sender: DeliverySender,
    @inject(WEBHOOKS_SETTINGS) private readonly settings: WebhooksSettings,
  ) {
    this.deliveries = storage.collection(DELIVERIES);
    this.webhookWrites = new GroupCommit(storage, { savepoints: false, gatherMs: OUTCOME_GATHER_MS });
    this.lanes = new ReceiverLanes(settings.concurrencyPerReceiver);
    this.drains = new RowDrains(
      {
        jobType: DRAIN_JOB,
        rows: this.deliveries,
        keyOf: webhookDrainKey,
        payloadOf: (delivery) => ({ webhookId: delivery.webhookId }),
        drainField: "webhookId",
        drainValue: (payload) => payload.webhookId,
        // Deliveries an earlier version marked in flight; attempts leave no mark now.
        inFlight: { inFlightSince: { exists: true } },
        unrecorded: { outcome: "unrecorded", retryAfterMs: UNRECORDED_RETRY_MS },
        outcomes: DELIVERY_OUTCOMES,
        // A read's own cost (its statement, cursor and where) is shared by its rows: pages of eight turns of requests make it a small part of a delivery's.
        pageSize: settings.concurrencyPerReceiver * 8,
        roomFor: (payload) => this.lanes.roomFor(payload.webhookId),
        start: (page, payload, context) => this.start(page, payload, context),
        describe: (payload) => ({ webhookId: payload.webhookId }),
      },
      storage,
      clock,
      jobs,
    );
  }

  /** In the transaction that stored a pending delivery of `webhookId`, due at `dueAt`: its drain runs by then. */
  arm(webhookId: string, dueAt: number): Promise<void> {
    return this.drains.arm({ webhookId }, dueAt);
  }

  /** The drain job's handler. */
  drain(payload: WebhookDrainPayload, context: JobContext): Promise<JobOutcome> {
    return this.drains.drain(payload, context);
  }

  private async start(page: readonly DeliveryRecord[], payload: WebhookDrainPayload, context: JobContext): Promise<Array<Promise<DeliveryOutcome>>> {
    const ids = page.map((delivery) => delivery.id);
    const webhook = await this.registry.forDelivery(payload.webhookId);
    if (!webhook || webhook.disabledAt !== undefined) {
      const error = webhook ? `the webhook is disabled: ${webhook.disabledReason ?? ""}` : "the webhook was deleted";
      await this.webhookWrites.run(() => this.deliveries.updateWhere({ id: { in: ids }, status: "pending" }, { dueAt: undefined, inFlightSince: undefined, status: "cancelled", error, updatedAt: this.clock.now() }));
      return page.map(() => Promise.resolve("cancelled" as const));
    }
    const keys = await this.signingKeys.signingKeys(webhook.applicationId);
    return page.map((delivery) => this.attempt(delivery, webhook, keys, context));
  }

  /**
   * One attempt at `delivery` once its receiver's lane has room, and its outcome written with those of the attempts
   * answered beside it: their deliveries' patches in one updateEach, and the webhook's own change (failing, delivered
   * again, disabled) beside them when it has one. One async method rather than a chain of callbacks: fewer promises
   * and closures a delivery.
   */
  private async attempt(delivery: DeliveryRecord, webhook: WebhookRecord, keys: readonly string[], context: JobContext): Promise<DeliveryOutcome> {
    try {
      const result = await this.lanes.run(webhook.id, () => postSigned(this.sender, this.clock, webhook, delivery, keys, context.signal));
      const { outcome, patch, webhookChange } = this.outcomeOf(delivery, webhook, result, context.signal.aborted, this.clock.now());
      // A delivery deleted meanwhile (a privacy request) stays deleted: updateEach skips an absent row.
      const settled = this.settled.write({ id: delivery.id, patch });
      if (webhookChange === undefined) await settled;
      else await Promise.all([settled, this.webhookWrites.run(webhookChange)]);
      return outcome;
    } catch (error) {
      context.logger.error("a delivery's outcome could not be recorded; it is tried again when due", { deliveryId: delivery.id, error });
      return "unrecorded";
    }
  }

  /** What an attempt's answer makes of its delivery, and of its webhook if anything. */
  private outcomeOf(delivery: DeliveryRecord, webhook: WebhookRecord, result: AttemptResult, stopped: boolean, now: number): { outcome: DeliveryOutcome; patch: Patch<DeliveryRecord>; webhookChange?: () => Promise<void> } {
    // The kit stopped during the request: due at once after the restart, the attempt not counted.
    if (stopped && !result.delivered) return { outcome: "interrupted", patch: { dueAt: now, inFlightSince: undefined, updatedAt: now } };
    if (result.delivered) {
      const webhookChange = webhook.failingSince === undefined ? undefined : () => this.registry.delivered(webhook);
      return { outcome: "delivered", patch: attemptPatch(delivery, result, now, "delivered", undefined), webhookChange };
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
    if (dueAt === undefined) return { outcome: "failed", patch: attemptPatch(delivery, result, now, "failed", undefined), webhookChange };
    return { outcome: "retrying", patch: attemptPatch(delivery, result, now, "pending", dueAt), webhookChange };
  }
}

/**
 * What an attempt writes in the log, and where it leaves its delivery: due again at `dueAt`, or out of the
 * queue (no `dueAt`), no longer in flight. One object literal: built by spreading its parts (fields set to
 * undefined among them), it took 3 µs a delivery, and patchSql read it slower.
 */
export function attemptPatch(delivery: DeliveryRecord, result: AttemptResult, now: number, status: DeliveryStatus, dueAt: number | undefined): Patch<DeliveryRecord> {
  return {
    attempts: delivery.attempts + 1,
    lastAttemptAt: now,
    latencyMs: result.latencyMs,
    responseStatus: result.status,
    responseBody: result.responseBody,
    error: result.error,
    status,
    dueAt,
    inFlightSince: undefined,
    updatedAt: now,
  };
}
