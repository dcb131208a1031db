import { inject, injectable, inJoinedTransaction, STORAGE, type Collection, type Doc, type Storage, type Where } from "../../src/index.ts";
import type { OutcomePages, PagedDelivery } from "./outcome-pages.ts";
import type { Advance, FirstAttempts } from "./first-attempts.ts";
import { WEBHOOK_FIRST_ATTEMPTS, WEBHOOK_OUTCOME_PAGES } from "./tokens.ts";
import { DELIVERIES, DUE_DELIVERIES, DELIVERY_OUTCOMES, type DeliveryRecord, type DueDelivery, type DeliveryOutcomeRow, type StoredDelivery } from "./records.ts";

/** An attempt's mark on its delivery's rows: due again (`due`) or out of the queue (`due` null), and its outcome if it made one. */
export interface DeliveryMark {
  id: string;
  /** The delivery's queue row: rewritten (due again, with its attempts) or, null, deleted. */
  due: Pick<DueDelivery, "dueAt" | "attempts"> | null;
  /** The delivery log's row of its last attempt: written whole (an earlier one's replaced). */
  outcome?: DeliveryOutcomeRow;
  /**
   * The delivery as its first attempt read it, after its webhook's cursor (FirstAttempts): it has no due row to
   * delete or rewrite; due again, it gets one. The cursor moves over it in the same transaction.
   */
  first?: DueDelivery;
}

/**
 * A delivery's rows. The delivery itself (its body, event, subject) never changes once written, and until its first
 * attempt it is all there is: its drain reads it after its webhook's first-attempt cursor (FirstAttempts). Waiting for a
 * later attempt, a row of `webhooks_due_deliveries` carries its queue state and a copy of its body (all its drain
 * reads), deleted when it leaves the queue. Its last attempt's record is a small row of `webhooks_delivery_outcomes`
 * or, delivered by its drain, an entry of its webhook's outcome page for the attempts answered with it
 * (OutcomePages). An attempt's outcome thus moves a cursor or deletes or rewrites a due row, writes a small row or a
 * share of a page, and updates no JSON: SQLite's `json_patch` alone cost about 4 µs a row, the UPDATE of a delivery
 * row as a whole 8–9 (bench:webhooks, docs/webhooks.md). A delivery as the kit shows it
 * ({@link DeliveryRecord}) is its rows together.
 */
@injectable()
export class DeliveryRows {
  readonly deliveries: Collection<StoredDelivery>;
  readonly due: Collection<DueDelivery>;
  readonly outcomes: Collection<DeliveryOutcomeRow>;

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(WEBHOOK_OUTCOME_PAGES) readonly pages: OutcomePages,
    @inject(WEBHOOK_FIRST_ATTEMPTS) readonly firstAttempts: FirstAttempts,
  ) {
    this.deliveries = storage.collection(DELIVERIES);
    this.due = storage.collection(DUE_DELIVERIES);
    this.outcomes = storage.collection(DELIVERY_OUTCOMES);
  }

  /**
   * Writes attempts' marks: their due rows deleted or rewritten (made, for a first attempt's delivery due again),
   * their outcomes, and their webhooks' first-attempt cursors moved, in one transaction (the caller's, if in one). A
   * delivery deleted while its attempt was out (a privacy request) gets no outcome or due row, which nothing would
   * delete: its due row went with it (deleteAll), and its webhook's cursor counts the deliveries it passes, so only
   * when a due row or a count is missing are the deliveries looked up. With `paged` (a webhook's live drain alone),
   * the delivered outcomes go to their webhooks' outcome pages.
   */
  mark(marks: readonly DeliveryMark[], options: { paged?: boolean } = {}): Promise<void> {
    let advance: Advance | undefined;
    const write = async () => {
      const queued = marks.filter((mark) => mark.first === undefined);
      const left = queued.filter((mark) => mark.due === null).map((mark) => mark.id);
      let found = left.length > 0 ? await this.due.deleteWhere({ id: { in: left } }) : 0;
      const dueAgain = queued.flatMap((mark) => (mark.due === null ? [] : [{ id: mark.id, patch: mark.due }]));
      if (dueAgain.length > 0) found += await this.due.updateEach(dueAgain);
      const firsts = marks.filter((mark) => mark.first !== undefined);
      if (firsts.length > 0) advance = await this.firstAttempts.advance(firsts.map((mark) => mark.first!));
      const stored = found === queued.length && (advance?.allStored ?? true) ? undefined : await this.storedIds(marks.map((mark) => mark.id));
      const isStored = (mark: DeliveryMark) => stored === undefined || stored.has(mark.id);
      const firstDue = firsts.flatMap((mark) => (mark.due === null || !isStored(mark) ? [] : [{ id: mark.id, webhookId: mark.first!.webhookId, body: mark.first!.body, ...mark.due }]));
      if (firstDue.length > 0) await this.due.upsertMany(firstDue);
      const outcomes = marks.flatMap((mark) => (mark.outcome === undefined || !isStored(mark) ? [] : [mark.outcome]));
      if (outcomes.length === 0) return;
      const rows = options.paged ? await this.pages.write(outcomes) : outcomes;
      if (rows.length > 0) await this.outcomes.upsertMany(rows);
    };
    return inJoinedTransaction(this.storage, write).then(() => advance?.committed());
  }

  /** Those of `ids` whose deliveries are still stored. */
  private async storedIds(ids: readonly string[]): Promise<Set<string>> {
    return new Set((await this.byId(this.deliveries, ids)).keys());
  }

  /**
   * The deliveries as the kit shows them: each with its last attempt's record over it (the later of its outcome row
   * and its page's entry, should it have both) and, while pending, its due row's time and attempts.
   */
  async shown(deliveries: readonly StoredDelivery[]): Promise<DeliveryRecord[]> {
    if (deliveries.length === 0) return [];
    const ids = deliveries.map((delivery) => delivery.id);
    const [outcomes, paged, due] = await Promise.all([this.byId(this.outcomes, ids), this.pages.lastAttempts(deliveries), this.byId(this.due, ids)]);
    return deliveries.map((delivery) => showDelivery(delivery, later(outcomes.get(delivery.id), paged.get(delivery.id)), due.get(delivery.id)));
  }

  /** The deliveries of `ids`, as the kit shows them, in the order of `ids` (absent ones left out). */
  async shownByIds(ids: readonly string[]): Promise<DeliveryRecord[]> {
    const deliveries = await this.byId(this.deliveries, ids);
    return this.shown(ids.flatMap((id) => deliveries.get(id) ?? []));
  }

  /** Deletes `deliveries` with their due and outcome rows and their pages' entries, in one transaction (the caller's, if in one). */
  deleteAll(deliveries: readonly PagedDelivery[]): Promise<number> {
    if (deliveries.length === 0) return Promise.resolve(0);
    const where = { id: { in: deliveries.map((delivery) => delivery.id) } };
    const write = async () => {
      await this.due.deleteWhere(where);
      await this.outcomes.deleteWhere(where);
      await this.pages.remove(deliveries);
      return this.deliveries.deleteWhere(where);
    };
    return inJoinedTransaction(this.storage, write);
  }

  async byId<T extends Doc>(collection: Collection<T>, ids: readonly string[]): Promise<Map<string, T>> {
    if (ids.length === 0) return new Map();
    const byIds: Where<Doc> = { id: { in: [...ids] } };
    const found = await collection.find({ where: byIds as Where<T>, limit: ids.length });
    return new Map(found.items.map((row) => [row.id, row]));
  }
}

/** The later of two records of a delivery's last attempt (an outcome row wins a tie). */
function later(row: DeliveryOutcomeRow | undefined, paged: DeliveryOutcomeRow | undefined): DeliveryOutcomeRow | undefined {
  if (row === undefined || paged === undefined) return row ?? paged;
  return (paged.lastAttemptAt ?? 0) > (row.lastAttemptAt ?? 0) ? paged : row;
}

/**
 * A delivery as the kit shows it: its row, pending with no attempt until its last attempt's record says otherwise,
 * and its due time and attempts while it is pending (its due row's, or, before its first attempt, its creation).
 */
function showDelivery(delivery: StoredDelivery, outcome: DeliveryOutcomeRow | undefined, due: DueDelivery | undefined): DeliveryRecord {
  const { webhookId: _webhookId, ...attempt } = outcome ?? {};
  const shown: DeliveryRecord = { ...delivery, status: "pending", attempts: 0, ...attempt, id: delivery.id };
  if (due !== undefined) {
    shown.dueAt = due.dueAt;
    shown.attempts = due.attempts;
  } else if (shown.status === "pending") {
    shown.dueAt = delivery.createdAt;
  }
  return shown;
}
