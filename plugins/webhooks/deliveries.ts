import {
  ACCOUNTS,
  CLOCK,
  inject,
  injectable,
  inJoinedTransaction,
  sortableId,
  STORAGE,
  type Accounts,
  type Clock,
  type DataSubject,
  type EventName,
  type JobContext,
  type JobOutcome,
  type Page,
  type ReachkitEvents,
  type Storage,
} from "../../src/index.ts";
import { attemptOutcome, postSigned, type WebhookDrainPayload, type WebhookDrains } from "./delivery-drains.ts";
import type { DeliveryRows } from "./delivery-rows.ts";
import type { DeliverySender } from "./delivery-sender.ts";
import { EVENT_ALIASES } from "./event-catalog.ts";
import { TRANSLATORS, webhookBody, type SubscriberLookup } from "./payloads.ts";
import { DELIVERY_ID_PREFIX, type DeliveryRecord, type DeliveryStatus, type WebhookRecord } from "./records.ts";
import type { SigningKeys } from "./signing-keys.ts";
import { WEBHOOK_DELIVERY_ROWS, WEBHOOK_DRAINS, WEBHOOK_REGISTRY, WEBHOOK_SENDER, WEBHOOK_SIGNING_KEYS, WEBHOOK_SUBSCRIBERS, WEBHOOKS_SETTINGS, type WebhooksSettings } from "./tokens.ts";
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
    @inject(WEBHOOK_DELIVERY_ROWS) private readonly rows: DeliveryRows,
  ) {}

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
        const id = `${DELIVERY_ID_PREFIX}${sortableId(now)}`;
        await this.rows.deliveries.insert({
          id,
          webhookId: webhook.id,
          companyId,
          applicationId: webhook.applicationId,
          event: type,
          body: bodyOf(type),
          ...(event.subject.phone !== undefined ? { phone: event.subject.phone } : {}),
          ...(event.subject.email !== undefined ? { email: event.subject.email } : {}),
          createdAt: now,
          updatedAt: now,
        });
        // No due row: its webhook's drain reads it after the webhook's first-attempt cursor (FirstAttempts).
        await this.drains.arm(webhook.id, now);
      }
    };
    // Its deliveries and their drains together: in the change's transaction (a savepoint of their own there cost
    // a fifth more CPU than the event's three inserts), or in one of their own for an event emitted outside one (a link click).
    await inJoinedTransaction(this.storage, write);
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
  async handOver(job: DeliverJob): Promise<JobOutcome> {
    const ids = job.deliveryIds ?? (job.deliveryId !== undefined ? [job.deliveryId] : []);
    return this.storage.transaction(async () => {
      // Their due rows were made by the migration (deliveries-due-in-rows-of-their-own).
      const pending = [...(await this.rows.byId(this.rows.due, ids)).values()];
      for (const due of pending) await this.drains.arm(due.webhookId, due.dueAt);
      return { deliveries: ids.length, handedToDrain: pending.length };
    });
  }

  /** The delivery log of a webhook, newest first. */
  async log(webhookId: string, options: DeliveryLogOptions = {}): Promise<DeliveryRecord[]> {
    return (await this.logPage(webhookId, options)).items;
  }

  /**
   * A page of the delivery log, newest first, and the cursor of the next (a log holds a month of deliveries): of
   * all the webhook's deliveries, or of those with one status (the failed and cancelled ones by their outcome rows,
   * the delivered and pending ones among the webhook's deliveries).
   */
  async logPage(webhookId: string, options: DeliveryLogOptions = {}): Promise<Page<DeliveryRecord>> {
    const limit = options.limit ?? 50;
    const query = { orderBy: [{ field: "id" as const, direction: "desc" as const }], limit, ...(options.after !== undefined ? { after: options.after } : {}) };
    if (options.status === undefined) {
      const page = await this.rows.deliveries.find({ where: { webhookId }, ...query });
      return { ...page, items: await this.rows.shown(page.items) };
    }
    if (options.status === "delivered" || options.status === "pending") return this.pageOfStatus(webhookId, options.status, limit, options.after);
    const page = await this.rows.outcomes.find({ where: { webhookId, status: options.status }, ...query });
    return { ...page, items: await this.rows.shownByIds(page.items.map((row) => row.id)) };
  }

  /**
   * The delivered or pending ones among the webhook's deliveries, newest first: most delivered ones' last attempts are
   * in outcome pages (DeliveryRows), and most pending ones have no row but the delivery's (FirstAttempts), which no
   * index lists by status. Reads the deliveries in order, at most `limit` at a time and LOOKED_AT_BY_STATUS in all, so
   * a page may come short (with the cursor of the next) where few have the status.
   */
  private async pageOfStatus(webhookId: string, status: "delivered" | "pending", limit: number, after: string | undefined): Promise<Page<DeliveryRecord>> {
    const found: DeliveryRecord[] = [];
    let lookedAt = 0;
    let cursor = after;
    do {
      // No more than are missing: every delivery read is either kept or not of the status, so the cursor skips none.
      const page = await this.rows.deliveries.find({ where: { webhookId }, orderBy: [{ field: "id", direction: "desc" }], limit: limit - found.length, after: cursor });
      for (const delivery of await this.rows.shown(page.items)) if (delivery.status === status) found.push(delivery);
      lookedAt += page.items.length;
      cursor = page.nextCursor;
    } while (cursor !== undefined && found.length < limit && lookedAt < Math.max(limit, LOOKED_AT_BY_STATUS));
    return cursor === undefined ? { items: found } : { items: found, nextCursor: cursor };
  }

  async get(id: string): Promise<DeliveryRecord | undefined> {
    const delivery = await this.rows.deliveries.get(id);
    return delivery === undefined ? undefined : (await this.rows.shown([delivery]))[0];
  }

  /**
   * Sends a delivery again now, in this process (the CLI), with the same
   * `webhook-id` and body: one attempt, recorded in the log. A pending delivery
   * keeps its schedule unless this delivers it.
   */
  async redeliver(delivery: DeliveryRecord, webhook: WebhookRecord): Promise<DeliveryRecord> {
    const keys = await this.signingKeys.signingKeys(delivery.applicationId);
    const result = await postSigned(this.sender, this.clock, webhook, delivery, keys);
    const outcome = attemptOutcome(delivery, result, this.clock.now(), result.delivered ? "delivered" : delivery.status);
    // Delivered, it leaves the queue; otherwise a pending one keeps its schedule, its attempt counted.
    const pending = delivery.dueAt !== undefined;
    await this.rows.mark([{ id: delivery.id, due: result.delivered || !pending ? null : { dueAt: delivery.dueAt!, attempts: outcome.attempts }, outcome }]);
    if (result.delivered) await this.registry.delivered(webhook);
    return (await this.get(delivery.id)) ?? delivery;
  }

  /** Deletes finished deliveries older than the retention (a pending one stays until it leaves the queue), a page at a time. */
  async prune(): Promise<number> {
    const before = this.clock.now() - this.settings.deliveryRetentionMs;
    let removed = 0;
    let after: string | undefined;
    do {
      const page = await this.rows.deliveries.find({ where: { createdAt: { lt: before } }, orderBy: [{ field: "createdAt" }], limit: PRUNED_PER_PAGE, after });
      const shown = await this.rows.shown(page.items);
      removed += await this.rows.deleteAll(shown.filter((delivery) => delivery.status !== "pending"));
      after = page.nextCursor;
    } while (after !== undefined);
    return removed;
  }

  /** The deliveries about a subject (their bodies hold its phone or email): deleted with its other data, due and outcome rows too. */
  async deleteSubjectData(subject: DataSubject): Promise<number> {
    const about = [
      ...(subject.phone ? [{ companyId: subject.companyId, phone: subject.phone }] : []),
      ...(subject.email ? [{ companyId: subject.companyId, email: subject.email.toLowerCase() }] : []),
    ];
    let removed = 0;
    for (const where of about) {
      for (;;) {
        // Each page deleted before the next read: the next page is the first again.
        const page = await this.rows.deliveries.find({ where, limit: PRUNED_PER_PAGE });
        const deleted = await this.rows.deleteAll(page.items);
        if (deleted === 0) break;
        removed += deleted;
      }
    }
    return removed;
  }
}

/** Deliveries read and deleted at a time by the retention and privacy deletions. */
const PRUNED_PER_PAGE = 500;
/** The most deliveries a page of the log's delivered or pending ones reads (unless its limit is higher). */
const LOOKED_AT_BY_STATUS = 1_000;
