import { inject, injectable, STORAGE, type Collection, type FreshRows, type Storage } from "../../src/index.ts";
import type { WebhookDrainPayload } from "./delivery-drains.ts";
import { idsByWebhook, type PagedDelivery } from "./outcome-pages.ts";
import { DELIVERIES, FIRST_ATTEMPT_CURSORS, type DueDelivery, type FirstAttemptCursor, type StoredDelivery } from "./records.ts";

/** What storing first attempts' outcomes did to their webhooks' cursors (FirstAttempts.advance). */
export interface Advance {
  /** Whether every marked delivery is still stored (none was deleted while its attempt was out). */
  allStored: boolean;
  /** To call once the transaction that moved the cursors committed. */
  committed(): void;
}

/** One drain run's first attempts of its webhook's deliveries: those after the stored cursor that it has handed out. */
interface Run {
  /** The stored cursor, as far as this run knows it committed. */
  through: string;
  /** The last delivery id read. */
  readTo: string;
  /** Ids after `through` handed out, in order: in flight, or settled (their outcome stored). */
  handed: string[];
  settled: Set<string>;
  /** A delivery turned up among those read that the run never read (another process's, committed late): read again from `through`. */
  rewind: boolean;
}

/** What a first attempt needs of its delivery besides its id (the deliveries' `fieldsReadAlone`, and an indexed field). */
const FIRST_ATTEMPT_FIELDS = ["body", "createdAt"] as const;

/** Deliveries read at a time while looking for one the run never read. */
const LISTED_PER_READ = 1_000;

/**
 * A webhook's deliveries before their first attempt: its drain reads them from the deliveries themselves, after the
 * webhook's cursor, and the cursor moves over them once their first attempts' outcomes are stored. A delivery thus
 * has no due row unless an attempt failed and it waits for the next: writing and deleting one for every delivery was
 * about a third of the kit's own CPU a delivery on the main thread (bench:webhooks-kit-cost, docs/webhooks.md).
 *
 * The cursor only moves over deliveries the run handed out, all of whose outcomes are stored (each transaction that
 * stores outcomes moves it, with a count that no delivery it never read sits among them), so a crash loses none: those
 * after the cursor go out again at the next start, with their `webhook-id`. One live drain per webhook moves its
 * cursor; a transaction that stores outcomes knows only what committed before it, so the cursor moves forward only.
 *
 * Its members are TypeScript-`private`, not `#private`: tsx turns those of a decorated class into WeakMap lookups.
 */
@injectable()
export class FirstAttempts implements FreshRows<DueDelivery, WebhookDrainPayload> {
  private readonly cursors: Collection<FirstAttemptCursor>;
  private readonly deliveries: Collection<StoredDelivery>;
  private readonly runs = new Map<string, Run>();

  constructor(@inject(STORAGE) storage: Storage) {
    this.cursors = storage.collection(FIRST_ATTEMPT_CURSORS);
    this.deliveries = storage.collection(DELIVERIES);
  }

  /** The stored cursor of `webhookId`: "" before its first delivery's outcome. */
  private async through(webhookId: string): Promise<string> {
    return (await this.cursors.get(webhookId))?.through ?? "";
  }

  /**
   * The webhooks with deliveries after their cursors, and the first such delivery's creation: those a dead drain
   * left (its process died).
   */
  async waiting(): Promise<Array<{ webhookId: string; since: number }>> {
    const waiting: Array<{ webhookId: string; since: number }> = [];
    for await (const webhookId of this.webhooksWithDeliveries()) {
      const next = await this.deliveries.findOne({ webhookId, id: { gt: await this.through(webhookId) } }, [{ field: "id" }]);
      if (next !== undefined) waiting.push({ webhookId, since: next.createdAt });
    }
    return waiting;
  }

  /** Each webhook's cursor at its last delivery: for a database whose every delivery has a due row or an outcome (migrations.ts). */
  async startAtLastDeliveries(): Promise<void> {
    for await (const webhookId of this.webhooksWithDeliveries()) {
      const last = await this.deliveries.findOne({ webhookId }, [{ field: "id", direction: "desc" }]);
      await this.cursors.upsert({ id: webhookId, through: last!.id });
    }
  }

  /** The webhooks that have deliveries: one read each, skipping from one webhook's deliveries to the next's on their index. */
  private async *webhooksWithDeliveries(): AsyncGenerator<string> {
    let after: string | undefined;
    for (;;) {
      const first = await this.deliveries.findOne({ webhookId: after === undefined ? { exists: true } : { gt: after } }, [{ field: "webhookId" }, { field: "id" }]);
      if (first === undefined) return;
      after = first.webhookId;
      yield after;
    }
  }

  /** A drain run of `webhookId` begins: it hands out the deliveries after the stored cursor. */
  async begin({ webhookId }: WebhookDrainPayload): Promise<void> {
    const stored = await this.cursors.get(webhookId);
    // Its row exists from the first run on, so that moving it is one conditional update.
    if (stored === undefined) await this.cursors.upsert({ id: webhookId, through: "" });
    const through = stored?.through ?? "";
    this.runs.set(webhookId, { through, readTo: through, handed: [], settled: new Set(), rewind: false });
  }

  /** The drain run of `webhookId` ended: what it handed out and did not settle goes out again with the next. */
  end({ webhookId }: WebhookDrainPayload): void {
    this.runs.delete(webhookId);
  }

  /** Up to `limit` of the webhook's deliveries its run has not handed out yet, in id order, as due rows. */
  async next({ webhookId }: WebhookDrainPayload, limit: number): Promise<DueDelivery[]> {
    const run = this.runs.get(webhookId);
    if (run === undefined) return [];
    const rewind = run.rewind;
    run.rewind = false;
    const page = await this.deliveries.findFields(FIRST_ATTEMPT_FIELDS, {
      where: { webhookId, id: { gt: rewind ? run.through : run.readTo } },
      orderBy: [{ field: "id" }],
      // From the cursor, past those handed out already.
      limit: rewind ? limit + run.handed.length : limit,
    });
    const rows: DueDelivery[] = [];
    for (const delivery of page.items) {
      if (delivery.id > run.readTo) run.readTo = delivery.id;
      else if (rewind && indexOf(run.handed, delivery.id) >= 0) continue;
      insertInOrder(run.handed, delivery.id);
      rows.push({ id: delivery.id, webhookId, dueAt: delivery.createdAt, attempts: 0, body: delivery.body, first: true });
    }
    return rows;
  }

  /**
   * In the transaction that stores the outcomes of first attempts (`marks`, of live runs): moves each webhook's cursor
   * over the deliveries handed out whose outcomes are all stored, these included, up to the first it never read.
   */
  async advance(marks: readonly PagedDelivery[]): Promise<Advance> {
    let allStored = true;
    const moves: Array<() => void> = [];
    for (const [webhookId, ids] of idsByWebhook(marks)) {
      const run = this.runs.get(webhookId);
      if (run === undefined) {
        allStored = false;
        continue;
      }
      const move = await this.move(webhookId, run, ids, ids.at(-1)!);
      allStored &&= move.allStored;
      moves.push(move.committed);
    }
    return { allStored, committed: () => moves.forEach((committed) => committed()) };
  }

  /**
   * In the drain's end transaction, every delivery it handed out settled: moves the cursor over them, and answers
   * whether any delivery after it is left to hand out (one committed since, or one the run never read).
   */
  async left({ webhookId }: WebhookDrainPayload): Promise<boolean> {
    const run = this.runs.get(webhookId);
    if (run === undefined) return false;
    if (run.handed.length > 0) (await this.move(webhookId, run, [], run.readTo)).committed();
    if (run.rewind) return true;
    return (await this.deliveries.findOne({ webhookId, id: { gt: run.through } })) !== undefined;
  }

  /** Moves `webhookId`'s cursor over the deliveries handed out up to `last` whose outcomes are stored, `ids`' now. */
  private async move(webhookId: string, run: Run, ids: readonly string[], last: string): Promise<Advance> {
    const stored = await this.deliveries.count({ webhookId, id: { gt: run.through, lte: last } });
    const handed = indexAfter(run.handed, last);
    let allStored = true;
    let unseen: string | undefined;
    // As many stored as handed out: none deleted, none the run never read (ids are unique, so equal counts are the same ids).
    if (stored !== handed) {
      allStored = false;
      unseen = await this.firstUnseen(webhookId, run, last);
      if (unseen !== undefined) run.rewind = true;
    }
    const marked = new Set(ids);
    let through = run.through;
    for (const id of run.handed) {
      if ((unseen !== undefined && id > unseen) || !(run.settled.has(id) || marked.has(id))) break;
      through = id;
    }
    if (through > run.through) await this.cursors.updateWhere({ id: webhookId, through: { lt: through } }, { through });
    const committed = () => {
      for (const id of ids) run.settled.add(id);
      if (through <= run.through) return;
      run.through = through;
      const passed = run.handed.splice(0, indexAfter(run.handed, through));
      for (const id of passed) run.settled.delete(id);
    };
    return { allStored, committed };
  }

  /** The first delivery of `webhookId` after the cursor and up to `last` that the run never handed out. */
  private async firstUnseen(webhookId: string, run: Run, last: string): Promise<string | undefined> {
    let after = run.through;
    for (;;) {
      const page = await this.deliveries.find({ where: { webhookId, id: { gt: after, lte: last } }, orderBy: [{ field: "id" }], limit: LISTED_PER_READ });
      const unseen = page.items.find((delivery) => indexOf(run.handed, delivery.id) < 0);
      if (unseen !== undefined) return unseen.id;
      if (page.items.length < LISTED_PER_READ) return undefined;
      after = page.items.at(-1)!.id;
    }
  }
}

/** How many of the sorted `ids` are at or before `id`. */
function indexAfter(ids: readonly string[], id: string): number {
  let low = 0;
  let high = ids.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (ids[middle]! <= id) low = middle + 1;
    else high = middle;
  }
  return low;
}

function indexOf(ids: readonly string[], id: string): number {
  const index = indexAfter(ids, id) - 1;
  return index >= 0 && ids[index] === id ? index : -1;
}

/** Adds `id` to the sorted `ids`: at the end, as read in order, or in its place (read again from the cursor). */
function insertInOrder(ids: string[], id: string): void {
  if (ids.length === 0 || ids.at(-1)! < id) ids.push(id);
  else ids.splice(indexAfter(ids, id), 0, id);
}
