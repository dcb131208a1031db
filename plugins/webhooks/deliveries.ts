import {
  ACCOUNTS,
  CLOCK,
  inject,
  injectable,
  sortableId,
  STORAGE,
  type Accounts,
  type Clock,
  type Collection,
  type DataSubject,
  type EventName,
  type JobContext,
  type JobOutcome,
  type Page,
  type ReachkitEvents,
  type Storage,
} from "../../src/index.ts";
import { attemptPatch, postSigned, type WebhookDrainPayload, type WebhookDrains } from "./delivery-drains.ts";
import type { DeliverySender } from "./delivery-sender.ts";
import { EVENT_ALIASES } from "./event-catalog.ts";
import { TRANSLATORS, webhookBody, type SubscriberLookup } from "./payloads.ts";
import { DELIVERIES, DELIVERY_ID_PREFIX, type DeliveryRecord, type DeliveryStatus, type WebhookRecord } from "./records.ts";
import type { SigningKeys } from "./signing-keys.ts";
import { WEBHOOK_DRAINS, WEBHOOK_REGISTRY, WEBHOOK_SENDER, WEBHOOK_SIGNING_KEYS, WEBHOOK_SUBSCRIBERS, WEBHOOKS_SETTINGS, type WebhooksSettings } from "./tokens.ts";
import type { WebhookRegistry } from "./webhook-registry.ts";

/**
 * The job of an event's first attempts before deliveries carried their own queue state: such jobs left in
 * a database still run, and hand their pending deliveries to their webhooks' drains.
 */
export const DELIVER_JOB = "webhooks.deliver";
/** An old delivery job's payload: the deliveries of one event, or one delivery. */
export interface DeliverJob {
  deliveryIds?: string[];
  deliveryId?: string;
}

export interface DeliveryLogOptions {
  status?: DeliveryStatus;
  limit?: number;
  /** The `nextCursor` of the previous page of the same query. */
  after?: string;
}

/**
 * Deliveries: each a row of its own, written inside the transaction of the
 * change that caused the event with its due time (so a crash loses none), and
 * POSTed at least once, with the same `webhook-id` on every attempt, by its
 * webhook's drain (WebhookDrains).
 */
@injectable()
export class Deliveries {
  private readonly deliveries: Collection<DeliveryRecord>;

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(WEBHOOK_DRAINS) private readonly drains: WebhookDrains,
    @inject(ACCOUNTS) private readonly accounts: Accounts,
    @inject(WEBHOOK_REGISTRY) private readonly registry: WebhookRegistry,
    @inject(WEBHOOK_SIGNING_KEYS) private readonly signingKeys: SigningKeys,
    @inject(WEBHOOK_SENDER) private readonly sender: DeliverySender,
    @inject(WEBHOOK_SUBSCRIBERS) private readonly subscribers: SubscriberLookup,
    @inject(WEBHOOKS_SETTINGS) private readonly settings: WebhooksSettings,
  ) {
    this.deliveries = storage.collection(DELIVERIES);
  }

  /**
   * The in-transaction listener of a domain event: a delivery for each
   * enabled webhook of the company that subscribed to it, due now, written in
   * the change's transaction with its webhook's drain armed.
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
    // Webhooks that take the event under one name get one body, made once.
    const bodies = new Map<string, string>();
    const bodyOf = (type: string) => bodies.get(type) ?? bodies.set(type, webhookBody(type, event, company)).get(type)!;
    const write = async () => {
      for (const { webhook, type } of targets) {
        await this.deliveries.insert({
          id: `${DELIVERY_ID_PREFIX}${sortableId(now)}`,
          webhookId: webhook.id,
          companyId,
          applicationId: webhook.applicationId,
          event: type,
          body: bodyOf(type),
          status: "pending",
          attempts: 0,
          dueAt: now,
          ...(event.subject.phone !== undefined ? { phone: event.subject.phone } : {}),
          ...(event.subject.email !== undefined ? { email: event.subject.email } : {}),
          createdAt: now,
          updatedAt: now,
        });
        await this.drains.arm(webhook.id, now);
      }
    };
    // Its deliveries and their drains together: in the change's transaction (a savepoint of their own there cost
    // a fifth more CPU than the event's three inserts), or in one of their own for an event emitted outside one (a link click).
    await (this.storage.inTransaction?.() ? write() : this.storage.transaction(write));
  }

  /** The drain job's handler: sends one webhook's due deliveries. */
  drain(payload: WebhookDrainPayload, context: JobContext): Promise<JobOutcome> {
    return this.drains.drain(payload, context);
  }

  /**
   * The handler of a delivery job queued before deliveries carried their own
   * queue state: each of its deliveries still pending is due when it was to be
   * attempted and goes out with its webhook's drain.
   */
  async handOver(job: DeliverJob, context: JobContext): Promise<JobOutcome> {
    const ids = job.deliveryIds ?? (job.deliveryId !== undefined ? [job.deliveryId] : []);
    return this.storage.transaction(async () => {
      const pending = (await this.deliveries.find({ where: { id: { in: ids }, status: "pending" }, orderBy: [{ field: "id" }] })).items;
      for (const delivery of pending) {
        const dueAt = delivery.dueAt ?? (delivery as LegacyDelivery).nextAttemptAt ?? context.job.runAt;
        if (delivery.dueAt === undefined) await this.deliveries.update(delivery.id, { dueAt });
        await this.drains.arm(delivery.webhookId, dueAt);
      }
      return { deliveries: ids.length, handedToDrain: pending.length };
    });
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
    const result = await postSigned(this.sender, this.clock, webhook, delivery, keys);
    const attempt = attemptPatch(delivery, result, this.clock.now(), result.delivered ? "delivered" : delivery.status, undefined);
    // Delivered, it leaves the queue; otherwise it keeps its schedule (and an in-flight mark an earlier version left).
    const { dueAt: _schedule, inFlightSince: _mark, ...logged } = attempt;
    await this.deliveries.update(delivery.id, result.delivered ? attempt : logged);
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
}

/** A delivery as an older version stored it: its next attempt's time, before `dueAt`. */
type LegacyDelivery = DeliveryRecord & { nextAttemptAt?: number };
