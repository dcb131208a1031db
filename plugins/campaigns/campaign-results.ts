import { setImmediate as nextTurn } from "node:timers/promises";
import { CLOCK, inject, injectable, OUTBOX, STORAGE, type Clock, type Collection, type Outbox, type Storage } from "../../src/index.ts";
import type { ProfileEventRecorded } from "../profiles/index.ts";
import type { SubscriptionEvent } from "../subscriptions/index.ts";
import { CLICKS, PURCHASES, RECIPIENTS, recipientId, type CampaignRecord, type ClickRecord, type PurchaseRecord, type RecipientRecord } from "./records.ts";

/** Opt-outs this long after a campaign's message count against it. */
export const OPT_OUT_WINDOW_MS = 24 * 60 * 60_000;
/** Purchases this long after a click on a campaign's link are attributed to it. */
export const ATTRIBUTION_WINDOW_MS = 7 * 24 * 60 * 60_000;
export const SKIP_REASONS = ["no_consent", "frequency_cap", "missing_macro", "no_phone", "no_email"] as const;

/** One variant's figures (or the campaign's, summed). */
export interface VariantResults {
  audience: number;
  sent: number;
  /** Still to send: due later (a local time, the end of quiet hours). */
  pending: number;
  cancelled: number;
  skipped: Record<string, number>;
  delivered: number;
  failed: number;
  clicks: number;
  uniqueClickers: number;
  optOuts: number;
  purchases: number;
  revenue: Record<string, number>;
}

export interface CampaignResultsView extends VariantResults {
  status: CampaignRecord["status"];
  variants: Record<string, VariantResults>;
}

/**
 * A campaign's figures per variant, and the listeners that gather them:
 * delivery receipts (`message.status_changed`), opt-outs within 24 hours of a
 * message, purchases within 7 days of a click on one of its links (the last
 * clicked message takes the purchase).
 */
@injectable()
export class CampaignResults {
  private readonly recipients: Collection<RecipientRecord>;
  private readonly clicks: Collection<ClickRecord>;
  private readonly purchases: Collection<PurchaseRecord>;

  constructor(
    @inject(STORAGE) storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(OUTBOX) private readonly outbox: Outbox,
  ) {
    this.recipients = storage.collection(RECIPIENTS);
    this.clicks = storage.collection(CLICKS);
    this.purchases = storage.collection(PURCHASES);
  }

  async results(campaign: CampaignRecord): Promise<CampaignResultsView> {
    const variants: Record<string, VariantResults> = {};
    for (const variant of campaign.variants) variants[variant.name] = await this.#variant(campaign.id, variant.name);
    const total = Object.values(variants).reduce(sum, empty());
    return { status: campaign.status, ...total, variants };
  }

  /** A receipt of a campaign message: the recipient's delivery is delivered or failed. */
  async onStatusChanged(change: { messageId: string; kind: string; status: string }): Promise<void> {
    if (change.kind !== "campaign" || !["delivered", "undelivered", "failed"].includes(change.status)) return;
    const message = await this.outbox.get(change.messageId);
    const campaignId = message?.tags?.campaignId;
    if (!message || campaignId === undefined) return;
    await this.recipients.update(recipientId(campaignId, message.to), { delivery: change.status === "delivered" ? "delivered" : "failed" });
  }

  /** A MARKETING unsubscribe: each campaign message to the address within the last 24 hours counts an opt-out. */
  async onUnsubscribed(event: SubscriptionEvent): Promise<void> {
    if (event.type !== "MARKETING") return;
    const recent = await this.recipients.find({ where: { companyId: event.companyId, address: event.address, sentAt: { gte: event.at - OPT_OUT_WINDOW_MS } } });
    for (const recipient of recent.items) if (recipient.optedOutAt === undefined) await this.recipients.update(recipient.id, { optedOutAt: event.at });
  }

  /** A purchase: attributed to the campaign message whose link the buyer clicked last, within 7 days. */
  async onEvent(event: ProfileEventRecorded): Promise<void> {
    if (event.kind !== "purchase") return;
    const click = await this.clicks.findOne({ companyId: event.companyId, profileId: event.profileId, at: { gte: event.at - ATTRIBUTION_WINDOW_MS } }, [{ field: "at", direction: "desc" }]);
    if (click?.campaignId === undefined) return;
    const items = event.items ?? [];
    const total = Math.round(items.reduce((amount, item) => amount + (item.price[0]?.value ?? 0) * (item.quantity ?? 1), 0) * 100) / 100;
    await this.purchases.upsert({
      id: JSON.stringify([click.campaignId, event.eventId]),
      companyId: event.companyId,
      campaignId: click.campaignId,
      variant: click.variant ?? "",
      profileId: event.profileId,
      total,
      currency: items[0]?.price[0]?.currency ?? "USD",
      at: this.clock.now(),
    });
  }

  /** Forgets a person's campaign records (privacy deletion). */
  async forget(companyId: string, profileIds: readonly string[]): Promise<number> {
    const profileId = { in: [...profileIds] };
    return (await this.recipients.deleteWhere({ companyId, profileId })) + (await this.purchases.deleteWhere({ companyId, profileId }));
  }

  async #variant(campaignId: string, variant: string): Promise<VariantResults> {
    // One count a turn: a campaign of a million recipients counted in one go would hold the process for its twelve scans.
    const count = async (where: Partial<Record<keyof RecipientRecord, unknown>>) => {
      await nextTurn();
      return this.recipients.count({ campaignId, variant, ...where } as never);
    };
    const audience = await count({});
    const sent = await count({ state: "sent" });
    const pending = await count({ state: "pending" });
    const cancelled = await count({ state: "cancelled" });
    const delivered = await count({ state: "sent", delivery: "delivered" });
    const failed = await count({ state: "sent", delivery: "failed" });
    const optOuts = await count({ optedOutAt: { exists: true } });
    const skipped: Record<string, number> = {};
    for (const reason of SKIP_REASONS) skipped[reason] = await count({ state: "skipped", reason });
    let clicks = 0;
    const clickers = new Set<string>();
    for await (const click of pages(this.clicks, { campaignId, variant })) {
      clicks++;
      clickers.add(click.profileId ?? click.recipientId ?? click.linkId);
    }
    let purchases = 0;
    const revenue: Record<string, number> = {};
    for await (const purchase of pages(this.purchases, { campaignId, variant })) {
      purchases++;
      revenue[purchase.currency] = Math.round(((revenue[purchase.currency] ?? 0) + purchase.total) * 100) / 100;
    }
    return { audience, sent, pending, cancelled, skipped, delivered, failed, clicks, uniqueClickers: clickers.size, optOuts, purchases, revenue };
  }
}

async function* pages<T extends { id: string; campaignId?: string; variant?: string }>(collection: Collection<T>, where: { campaignId: string; variant: string }): AsyncGenerator<T> {
  let after: string | undefined;
  do {
    const page = await collection.find({ where: where as never, limit: 1000, ...(after !== undefined ? { after } : {}) });
    yield* page.items;
    after = page.nextCursor;
  } while (after !== undefined);
}

function empty(): VariantResults {
  return { audience: 0, sent: 0, pending: 0, cancelled: 0, skipped: {}, delivered: 0, failed: 0, clicks: 0, uniqueClickers: 0, optOuts: 0, purchases: 0, revenue: {} };
}

function sum(total: VariantResults, variant: VariantResults): VariantResults {
  const add = (a: Record<string, number>, b: Record<string, number>) => {
    const out = { ...a };
    for (const [key, value] of Object.entries(b)) out[key] = Math.round(((out[key] ?? 0) + value) * 100) / 100;
    return out;
  };
  return {
    audience: total.audience + variant.audience,
    sent: total.sent + variant.sent,
    pending: total.pending + variant.pending,
    cancelled: total.cancelled + variant.cancelled,
    skipped: add(total.skipped, variant.skipped),
    delivered: total.delivered + variant.delivered,
    failed: total.failed + variant.failed,
    clicks: total.clicks + variant.clicks,
    uniqueClickers: total.uniqueClickers + variant.uniqueClickers,
    optOuts: total.optOuts + variant.optOuts,
    purchases: total.purchases + variant.purchases,
    revenue: add(total.revenue, variant.revenue),
  };
}
