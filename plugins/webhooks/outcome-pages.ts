import { inject, injectable, STORAGE, type Collection, type Storage } from "../../src/index.ts";
import { OUTCOME_PAGES, type DeliveryOutcomeRow, type OutcomeColumns, type OutcomePage, type PagedOutcome, type StoredDelivery } from "./records.ts";

/** A delivery as a page is looked up by: its id, within its webhook's pages. */
export type PagedDelivery = Pick<StoredDelivery, "id" | "webhookId">;

/** Webhooks whose last page's `lastId` a process keeps, all forgotten at once past this many. */
const LAST_IDS_KEPT = 10_000;

/**
 * The delivered outcomes a webhook's drain writes together, one row a gather (OutcomePage) rather than one a delivery:
 * an outcome row's INSERT, its index entry and its JSON were about a quarter of the kit's own CPU a delivery
 * (bench:webhooks-kit-cost, docs/webhooks.md). A webhook's pages follow one another: each holds deliveries whose ids
 * all come after the last page's, so its pages in `lastId` order are in `firstId` order too, and the one page that may
 * hold a delivery is found by one indexed read. An outcome that would break that order (a delivery answered after
 * a later one's page was written) goes to an outcome row instead, as every attempt's outcome did before.
 *
 * Its members are TypeScript-`private`, not `#private`: tsx turns those of a decorated class into WeakMap lookups.
 */
@injectable()
export class OutcomePages {
  readonly pages: Collection<OutcomePage>;
  /** The `lastId` of each webhook's last page that this process wrote or read. */
  private readonly lastIds = new Map<string, string>();

  constructor(@inject(STORAGE) storage: Storage) {
    this.pages = storage.collection(OUTCOME_PAGES);
  }

  /**
   * Writes the outcomes among `outcomes` delivered at their first attempt whose ids come after their webhook's last
   * page into a new page of it, in the caller's transaction; answers the others (an outcome row each). Only a
   * webhook's live drain may page its outcomes: it alone writes its pages, one after the other. The last page's id
   * is remembered before the transaction commits: should it not, the next write pages fewer outcomes (those up to
   * that id get rows), never one out of order.
   */
  async write(outcomes: readonly DeliveryOutcomeRow[]): Promise<DeliveryOutcomeRow[]> {
    const rows: DeliveryOutcomeRow[] = [];
    const delivered = new Map<string, DeliveryOutcomeRow[]>();
    for (const outcome of outcomes) {
      // A retry's outcome replaces its earlier attempt's row.
      if (outcome.status !== "delivered" || outcome.attempts !== 1 || outcome.lastAttemptAt === undefined) rows.push(outcome);
      else listOf(delivered, outcome.webhookId).push(outcome);
    }
    const pages: OutcomePage[] = [];
    // Webhooks in one order: two writes that lock the same ones at once (on a storage of concurrent transactions) wait, never deadlock.
    for (const webhookId of [...delivered.keys()].sort()) {
      const ofWebhook = delivered.get(webhookId)!;
      const lastId = await this.lastIdOf(webhookId);
      const paged: DeliveryOutcomeRow[] = [];
      for (const outcome of ofWebhook) (lastId === undefined || outcome.id > lastId ? paged : rows).push(outcome);
      if (paged.length === 0) continue;
      const page = pageOf(webhookId, paged);
      pages.push(page);
      this.lastIds.set(webhookId, page.lastId);
    }
    if (pages.length > 0) await this.pages.upsertMany(pages);
    return rows;
  }

  /**
   * The `lastId` of the webhook's last page, in the caller's transaction: the one this process wrote last, unless a
   * later one is stored (another process's drain of the webhook ran since), then read. A count on the index rather
   * than the last page read every time: a page's document is a few hundred outcomes, and parsing it was about a
   * microsecond a delivery.
   */
  private async lastIdOf(webhookId: string): Promise<string | undefined> {
    // Written by one drain at a time; the lock keeps two of its writes that retry at once (GatheredWrites) in order.
    await this.pages.lockKey(`webhook-outcome-pages:${webhookId}`);
    const known = this.lastIds.get(webhookId);
    if (known !== undefined && (await this.pages.count({ webhookId, lastId: { gt: known } })) === 0) return known;
    if (this.lastIds.size >= LAST_IDS_KEPT) this.lastIds.clear();
    const last = await this.pages.findOne({ webhookId }, [{ field: "lastId", direction: "desc" }]);
    if (last !== undefined) this.lastIds.set(webhookId, last.lastId);
    return last?.lastId;
  }

  /** The last attempts the pages hold of `deliveries`, as outcome rows, by delivery id. */
  async lastAttempts(deliveries: readonly PagedDelivery[]): Promise<Map<string, DeliveryOutcomeRow>> {
    const found = new Map<string, DeliveryOutcomeRow>();
    for (const [webhookId, ids] of idsByWebhook(deliveries)) {
      const wanted = new Set(ids);
      for (const page of await this.covering(webhookId, ids)) {
        for (const paged of outcomesOf(page)) {
          if (wanted.has(paged.id)) found.set(paged.id, { ...paged, webhookId, status: "delivered", updatedAt: paged.lastAttemptAt });
        }
      }
    }
    return found;
  }

  /** Takes `deliveries` out of their pages, in the caller's transaction: a page left empty is deleted. */
  async remove(deliveries: readonly PagedDelivery[]): Promise<void> {
    for (const [webhookId, ids] of idsByWebhook(deliveries)) {
      const removed = new Set(ids);
      for (const page of await this.covering(webhookId, ids)) {
        const outcomes = outcomesOf(page);
        const kept = outcomes.filter((paged) => !removed.has(paged.id));
        if (kept.length === outcomes.length) continue;
        if (kept.length === 0) await this.pages.delete(page.id);
        // Its range kept: the pages still follow one another, and its id (its first delivery's) still names it.
        else await this.pages.upsert({ id: page.id, webhookId, firstId: page.firstId, lastId: page.lastId, ...columnsOf(kept) });
      }
    }
  }

  /**
   * The webhook's pages whose ranges hold some of `ids` (sorted). Its pages follow one another, so the first that ends
   * at or after an id is the only one that may hold it, and it settles every id up to its own last: one indexed read
   * for each run of ids a page covers, however far apart the runs (a subject's deliveries over a month, the failed
   * ones of a log page).
   */
  private async covering(webhookId: string, ids: readonly string[]): Promise<OutcomePage[]> {
    const covering: OutcomePage[] = [];
    let index = 0;
    while (index < ids.length) {
      const page = await this.pages.findOne({ webhookId, lastId: { gte: ids[index]! } }, [{ field: "lastId" }]);
      if (page === undefined) break;
      covering.push(page);
      while (index < ids.length && ids[index]! <= page.lastId) index++;
    }
    return covering;
  }
}

/** A page of one webhook's delivered outcomes: its id is its first delivery's, which no later page of the webhook shares. */
function pageOf(webhookId: string, outcomes: readonly DeliveryOutcomeRow[]): OutcomePage {
  let firstId = outcomes[0]!.id;
  let lastId = firstId;
  for (const { id } of outcomes) {
    if (id < firstId) firstId = id;
    if (id > lastId) lastId = id;
  }
  return { id: `${webhookId}:${firstId}`, webhookId, firstId, lastId, ...columnsOf(outcomes) };
}

/** What a page holds of delivered first attempts: each one's id, time and latency, and the statuses and answers, once when they are all the same. */
function columnsOf(outcomes: ReadonlyArray<Pick<DeliveryOutcomeRow, "id" | "lastAttemptAt" | "responseStatus" | "latencyMs" | "responseBody">>): OutcomeColumns {
  let attemptedAt = Infinity;
  for (const outcome of outcomes) attemptedAt = Math.min(attemptedAt, outcome.lastAttemptAt!);
  return {
    ids: outcomes.map((outcome) => outcome.id),
    attemptedAt,
    after: outcomes.map((outcome) => outcome.lastAttemptAt! - attemptedAt),
    latencies: outcomes.map((outcome) => outcome.latencyMs ?? null),
    statuses: onceOrEach(outcomes.map((outcome) => outcome.responseStatus ?? null)),
    bodies: onceOrEach(outcomes.map((outcome) => outcome.responseBody ?? null)),
  };
}

/** `values` as one value when they are all the same. */
function onceOrEach<T extends string | number | null>(values: T[]): T | T[] {
  return values.every((value) => value === values[0]) ? values[0]! : values;
}

/** A page's outcomes, from its columns or, written before them, as it holds them. */
function outcomesOf(page: OutcomePage): PagedOutcome[] {
  if ("outcomes" in page) return page.outcomes;
  const { ids, attemptedAt, after, latencies, statuses, bodies } = page;
  return ids.map((id, index) => {
    const outcome: PagedOutcome = { id, attempts: 1, lastAttemptAt: attemptedAt + after[index]! };
    const status = Array.isArray(statuses) ? statuses[index] : statuses;
    const latency = latencies[index];
    const body = Array.isArray(bodies) ? bodies[index] : bodies;
    if (status !== null && status !== undefined) outcome.responseStatus = status;
    if (latency !== null && latency !== undefined) outcome.latencyMs = latency;
    if (body !== null && body !== undefined) outcome.responseBody = body;
    return outcome;
  });
}

/** The ids of `deliveries` by webhook, each list sorted. */
export function idsByWebhook(deliveries: readonly PagedDelivery[]): Map<string, string[]> {
  const byWebhook = new Map<string, string[]>();
  for (const { id, webhookId } of deliveries) listOf(byWebhook, webhookId).push(id);
  for (const ids of byWebhook.values()) ids.sort();
  return byWebhook;
}

function listOf<T>(lists: Map<string, T[]>, key: string): T[] {
  let list = lists.get(key);
  if (list === undefined) lists.set(key, (list = []));
  return list;
}
