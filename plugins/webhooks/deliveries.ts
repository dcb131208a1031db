import {
  ACCOUNTS,
  CLOCK,
  GroupCommit,
  inject,
  injectable,
  JOBS,
  RunLaterError,
  sortableId,
  STORAGE,
  type Accounts,
  type Clock,
  type Collection,
  type DataSubject,
  type EventName,
  type JobContext,
  type JobOutcome,
  type Jobs,
  type Page,
  type ReachkitEvents,
  type Storage,
} from "../../src/index.ts";
import type { AttemptResult, DeliverySender } from "./delivery-sender.ts";
import { EVENT_ALIASES } from "./event-catalog.ts";
import { TRANSLATORS, webhookBody, type SubscriberLookup } from "./payloads.ts";
import { ReceiverLanes } from "./receiver-lanes.ts";
import { DELIVERIES, DELIVERY_ID_PREFIX, type DeliveryRecord, type DeliveryStatus, type WebhookRecord } from "./records.ts";
import { MAX_DELIVERY_ATTEMPTS, retryDelayMs } from "./retry-schedule.ts";
import { signatureHeaders } from "./signing.ts";
import type { SigningKeys } from "./signing-keys.ts";
import { WEBHOOK_REGISTRY, WEBHOOK_SENDER, WEBHOOK_SIGNING_KEYS, WEBHOOK_SUBSCRIBERS, WEBHOOKS_SETTINGS, type WebhooksSettings } from "./tokens.ts";
import type { WebhookRegistry } from "./webhook-registry.ts";

export const DELIVER_JOB = "webhooks.deliver";
/**
 * The delivery jobs' own job slots. A job holds one only until its requests
 * are in their receivers' lanes (then it releases it), so these bound the
 * deliveries read and signed at once, and a wake claims up to twice as many
 * jobs in one commit.
 */
export const DELIVERY_SLOTS = 32;
/**
 * The deliveries of one event, one per webhook: one job makes the first
 * attempt of each. A delivery that must wait (a retry, a slow receiver's turn)
 * while others of its job went out gets a job of its own (its `jobId`).
 */
export interface DeliverJob {
  deliveryIds?: string[];
  /** One delivery: the payload of the jobs queued before `deliveryIds`. */
  deliveryId?: string;
}

/** The job an attempt belongs to: its id, its deliveries, and its done mark. */
interface JobOfDeliveries {
  id: string;
  deliveryIds: readonly string[];
  markDone: JobContext["markDone"];
}

export interface DeliveryLogOptions {
  status?: DeliveryStatus;
  limit?: number;
  /** The `nextCursor` of the previous page of the same query. */
  after?: string;
}

/**
 * Deliveries: queued inside the transaction of the change that caused the
 * event (a durable job each, so a crash loses none), then POSTed at least once,
 * with the same `webhook-id` on every attempt, through the receiver's lane.
 */
@injectable()
export class Deliveries {
  private readonly deliveries: Collection<DeliveryRecord>;
  private readonly lanes: ReceiverLanes;
  /** The outcomes of the attempts answered together, each with its job's done mark: one commit for them all. */
  private readonly outcomes: GroupCommit;

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(JOBS) private readonly jobs: Jobs,
    @inject(ACCOUNTS) private readonly accounts: Accounts,
    @inject(WEBHOOK_REGISTRY) private readonly registry: WebhookRegistry,
    @inject(WEBHOOK_SIGNING_KEYS) private readonly signingKeys: SigningKeys,
    @inject(WEBHOOK_SENDER) private readonly sender: DeliverySender,
    @inject(WEBHOOK_SUBSCRIBERS) private readonly subscribers: SubscriberLookup,
    @inject(WEBHOOKS_SETTINGS) private readonly settings: WebhooksSettings,
  ) {
    this.deliveries = storage.collection(DELIVERIES);
    this.lanes = new ReceiverLanes(settings.concurrencyPerReceiver);
    this.outcomes = new GroupCommit(storage);
  }

  /**
   * The in-transaction listener of a domain event: a delivery and its job for
   * each enabled webhook of the company that subscribed to it, written in the
   * change's transaction.
   */
  async fanOut<K extends EventName>(name: K, payload: ReachkitEvents[K]): Promise<void> {
    const companyId = (payload as { companyId?: unknown }).companyId;
    if (typeof companyId !== "string") return;
    const webhooks = await this.registry.enabledOf(companyId);
    if (webhooks.length === 0) return;
    const now = this.clock.now();
    const event = await TRANSLATORS[name]?.(payload, this.subscribers, now);
    if (!event) return;
    const targets = webhooks.flatMap((webhook) => {
      const type = webhook.events.includes(event.type) ? event.type : webhook.events.find((name) => EVENT_ALIASES[name] === event.type);
      return type === undefined ? [] : [{ webhook, type }];
    });
    if (targets.length === 0) return;
    const company = await this.accounts.getCompany(companyId);
    // Its deliveries and their job together, also for an event emitted outside a transaction (a link click).
    await this.storage.transaction(async () => {
      const deliveryIds: string[] = [];
      for (const { webhook, type } of targets) {
        const delivery: DeliveryRecord = {
          id: `${DELIVERY_ID_PREFIX}${sortableId(now)}`,
          webhookId: webhook.id,
          companyId,
          applicationId: webhook.applicationId,
          event: type,
          body: webhookBody(type, event, company),
          status: "pending",
          attempts: 0,
          nextAttemptAt: now,
          ...(event.subject.phone !== undefined ? { phone: event.subject.phone } : {}),
          ...(event.subject.email !== undefined ? { email: event.subject.email } : {}),
          createdAt: now,
          updatedAt: now,
        };
        await this.deliveries.insert(delivery);
        deliveryIds.push(delivery.id);
      }
      await this.jobs.enqueue<DeliverJob>({ type: DELIVER_JOB, payload: { deliveryIds }, companyId });
    });
  }

  /**
   * The job: one attempt of each of its deliveries that is still pending and
   * not handed to a job of its own. Its runner slot is given back while the
   * requests are out. A full receiver lane, or a failed attempt to retry,
   * puts the job back for later when nothing else of it is left; otherwise
   * that delivery is handed to a job of its own, due then, so the others
   * finish without it. The job is marked done in the commit of its last write.
   */
  async attempt(job: DeliverJob, context: JobContext): Promise<JobOutcome | undefined> {
    const ids = job.deliveryIds ?? (job.deliveryId !== undefined ? [job.deliveryId] : []);
    const owned = await this.#owned(ids, context.job.id);
    const counts: Record<string, number> = { deliveries: owned.length };
    const count = (outcome: string, n = 1) => void (counts[outcome] = (counts[outcome] ?? 0) + n);
    const sends: Array<{ delivery: DeliveryRecord; webhook: WebhookRecord; sending: Promise<AttemptResult> }> = [];
    const waiting: Array<{ delivery: DeliveryRecord; runAt: number; origin: string }> = [];
    for (const delivery of owned) {
      const webhook = await this.registry.forDelivery(delivery.webhookId);
      if (!webhook || webhook.disabledAt !== undefined) {
        await this.#settle(delivery, { status: "cancelled", error: webhook ? `the webhook is disabled: ${webhook.disabledReason ?? ""}` : "the webhook was deleted" });
        count("cancelled");
        continue;
      }
      const keys = await this.signingKeys.signingKeys(delivery.applicationId);
      const origin = new URL(webhook.url).origin;
      const lane = this.lanes.offer(origin, delivery.id, () => this.#post(webhook, delivery, keys, context.signal));
      if ("retryInMs" in lane) waiting.push({ delivery, runAt: this.clock.now() + lane.retryInMs, origin });
      else sends.push({ delivery, webhook, sending: lane.sending });
    }
    if (sends.length === 0) {
      if (waiting.length === 0) return counts;
      throw new RunLaterError(Math.min(...waiting.map(({ runAt }) => runAt)), `the receiver ${waiting[0]!.origin} is slow`);
    }
    context.releaseSlot();
    const ofJob: JobOfDeliveries = { id: context.job.id, deliveryIds: ids, markDone: context.markDone };
    const writes: Array<Promise<string | undefined>> = sends.map(({ delivery, webhook, sending }) =>
      // Each attempt whose request is out is a participant: the outcomes commit once every one has written or ended.
      this.outcomes.participate(async () => {
        const result = await sending;
        // The kit stopped during the request: the job runs again after the restart, the attempt not counted.
        if (context.signal.aborted && !result.delivered) throw new RunLaterError(this.clock.now(), "the kit stopped");
        return this.#record(delivery, webhook, result, ofJob);
      }),
    );
    if (waiting.length > 0) {
      writes.push(
        this.outcomes.run(async (group) => {
          for (const { delivery, runAt } of waiting) await this.#handOver(delivery, runAt, {});
          if (!(await this.#othersLeft(ofJob))) await ofJob.markDone(group);
          return undefined;
        }),
      );
    }
    const outcomes = await Promise.allSettled(writes);
    const failure = outcomes.find((outcome) => outcome.status === "rejected");
    if (failure) throw failure.reason;
    for (const outcome of outcomes) if (outcome.status === "fulfilled" && outcome.value !== undefined) count(outcome.value);
    if (waiting.length > 0) count("handedOver", waiting.length);
    return counts;
  }

  /** The deliveries still pending that no other job was handed. */
  async #owned(ids: readonly string[], jobId: string): Promise<DeliveryRecord[]> {
    const read = ids.length === 1 ? [await this.deliveries.get(ids[0]!)] : (await this.deliveries.find({ where: { id: { in: [...ids] } }, orderBy: [{ field: "id" }] })).items;
    // Gone: deleted by a privacy request or the retention.
    return read.filter((delivery): delivery is DeliveryRecord => delivery?.status === "pending" && (delivery.jobId === undefined || delivery.jobId === jobId));
  }

  /**
   * Whether the job still has a delivery to attempt besides `except`. Read in the outcome's write, it sees
   * that transaction's writes and what committed before: so the job is marked done only with its last
   * outcome, and never while an outcome whose commit failed leaves its delivery pending.
   */
  async #othersLeft(job: JobOfDeliveries, except?: string): Promise<boolean> {
    const others = job.deliveryIds.filter((id) => id !== except);
    return others.length > 0 && (await this.#owned(others, job.id)).length > 0;
  }

  /** Gives a delivery a job of its own, due at `runAt`: its event's job goes on without it. */
  async #handOver(delivery: DeliveryRecord, runAt: number, changes: Partial<DeliveryRecord>): Promise<void> {
    const next = await this.jobs.enqueue<DeliverJob>({ type: DELIVER_JOB, payload: { deliveryIds: [delivery.id] }, runAt, companyId: delivery.companyId });
    await this.#settle(delivery, { ...changes, nextAttemptAt: runAt, jobId: next.id });
  }

  /** The delivery log of a webhook, newest first. */
  async log(webhookId: string, options: DeliveryLogOptions = {}): Promise<DeliveryRecord[]> {
    return (await this.logPage(webhookId, options)).items;
  }

  /** A page of the delivery log, newest first, and the cursor of the next (a log holds a month of deliveries). */
  logPage(webhookId: string, options: DeliveryLogOptions = {}): Promise<Page<DeliveryRecord>> {
    return this.deliveries.find({
      where: { webhookId, ...(options.status ? { status: options.status } : {}) },
      orderBy: [{ field: "id", direction: "desc" }],
      limit: options.limit ?? 50,
      ...(options.after !== undefined ? { after: options.after } : {}),
    });
  }

  get(id: string): Promise<DeliveryRecord | undefined> {
    return this.deliveries.get(id);
  }

  /**
   * Sends a delivery again now, in this process (the CLI), with the same
   * `webhook-id` and body: one attempt, recorded in the log. A pending delivery
   * keeps its schedule unless this delivers it.
   */
  async redeliver(delivery: DeliveryRecord, webhook: WebhookRecord): Promise<DeliveryRecord> {
    const keys = await this.signingKeys.signingKeys(delivery.applicationId);
    const result = await this.#post(webhook, delivery, keys);
    const now = this.clock.now();
    const status: DeliveryStatus = result.delivered ? "delivered" : delivery.status;
    await this.#settle(delivery, { ...attemptFields(delivery, result, now), status, ...(result.delivered ? { nextAttemptAt: undefined } : {}) });
    if (result.delivered) await this.registry.delivered(webhook);
    return (await this.deliveries.get(delivery.id)) ?? delivery;
  }

  /** Deletes finished deliveries older than the retention. */
  async prune(): Promise<number> {
    return this.deliveries.deleteWhere({ createdAt: { lt: this.clock.now() - this.settings.deliveryRetentionMs }, status: { ne: "pending" } });
  }

  /** The deliveries about a subject (their bodies hold its phone or email): deleted with its other data. */
  async deleteSubjectData(subject: DataSubject): Promise<number> {
    let removed = 0;
    if (subject.phone) removed += await this.deliveries.deleteWhere({ companyId: subject.companyId, phone: subject.phone });
    if (subject.email) removed += await this.deliveries.deleteWhere({ companyId: subject.companyId, email: subject.email.toLowerCase() });
    return removed;
  }

  #post(webhook: WebhookRecord, delivery: DeliveryRecord, keys: readonly string[], stop?: AbortSignal): Promise<AttemptResult> {
    // Signed when it leaves, not when it was queued: receivers check webhook-timestamp against their clock.
    const headers = signatureHeaders(keys, delivery.id, Math.floor(this.clock.now() / 1000), delivery.body);
    return this.sender.post(webhook.url, delivery.body, headers, stop);
  }

  /**
   * Writes an attempt's outcome with those of the attempts answered beside it
   * (a group commit). A delivery to retry is put back with its job when it is
   * the job's last delivery left, or else handed to a job of its own.
   */
  async #record(delivery: DeliveryRecord, webhook: WebhookRecord, result: AttemptResult, job: JobOfDeliveries): Promise<"delivered" | "failed" | "retrying"> {
    const now = this.clock.now();
    const fields = attemptFields(delivery, result, now);
    const outcome = await this.outcomes.run(async (group) => {
      if (result.delivered) {
        await this.#settle(delivery, { ...fields, status: "delivered", nextAttemptAt: undefined });
        await this.registry.delivered(webhook);
        if (!(await this.#othersLeft(job))) await job.markDone(group);
        return "delivered" as const;
      }
      const failingSince = webhook.failingSince ?? now;
      await this.registry.failing(webhook, failingSince);
      const disableFor =
        result.status === 410
          ? "the receiver answered 410 Gone"
          : now - failingSince >= this.settings.disableAfterFailingMs
            ? `every attempt failed since ${new Date(failingSince).toISOString()}`
            : undefined;
      if (disableFor !== undefined) await this.registry.disable(webhook, disableFor);
      if (disableFor !== undefined || fields.attempts >= MAX_DELIVERY_ATTEMPTS) {
        await this.#settle(delivery, { ...fields, status: "failed", nextAttemptAt: undefined });
        if (!(await this.#othersLeft(job))) await job.markDone(group);
        return "failed" as const;
      }
      const nextAttemptAt = now + retryDelayMs(fields.attempts);
      if (!(await this.#othersLeft(job, delivery.id))) {
        await this.#settle(delivery, { ...fields, nextAttemptAt });
        return nextAttemptAt;
      }
      await this.#handOver(delivery, nextAttemptAt, fields);
      return "retrying" as const;
    });
    if (typeof outcome === "number") throw new RunLaterError(outcome, `attempt ${fields.attempts} of ${delivery.id} failed: ${result.error ?? ""}`);
    return outcome;
  }

  async #settle(delivery: DeliveryRecord, changes: Partial<DeliveryRecord>): Promise<void> {
    await this.deliveries.update(delivery.id, { ...changes, updatedAt: this.clock.now() });
  }
}

/** What an attempt writes in the log, whatever its outcome. */
function attemptFields(delivery: DeliveryRecord, result: AttemptResult, now: number) {
  return {
    attempts: delivery.attempts + 1,
    lastAttemptAt: now,
    latencyMs: result.latencyMs,
    responseStatus: result.status,
    responseBody: result.responseBody,
    error: result.error,
  };
}
