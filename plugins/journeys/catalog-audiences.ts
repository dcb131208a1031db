import { CLOCK, inject, injectable, JOBS, STORAGE, type Clock, type Collection, type JobContext, type JobOutcome, type Jobs, type Storage } from "../../src/index.ts";
import type { CatalogVariantEvent } from "../catalog/index.ts";
import type { ProductItem } from "../profiles/index.ts";
import { DEFAULT_INTERACTED_WITHIN, durationMs } from "./definition.ts";
import type { JourneyDefinitions } from "./journey-definitions.ts";
import type { JourneyEngine } from "./journey-engine.ts";
import { INTEREST, interestId, variantInterestRange, type InterestKind, type InterestRecord, type Subject } from "./records.ts";
import { catalogSubject } from "./subjects.ts";
import { JOURNEY_DEFINITIONS, JOURNEY_ENGINE } from "./tokens.ts";

export const AUDIENCE_JOB = "journeys.catalog-audience";
/** Interest rows read per storage transaction of an audience job. */
const AUDIENCE_PAGE = 500;
/** A person's interest in a variant is written at most this often per kind (a browsing session views a product many times). */
const INTEREST_RESOLUTION_MS = 60 * 60_000;
const REMEMBERED_INTEREST = 100_000;
/** Interest rows are written together, at most this many or this long after the first of a batch. */
export const INTEREST_BATCH = 500;
export const INTEREST_BATCH_MS = 100;

export interface AudienceJob {
  journeyId: string;
  companyId: string;
  variantId: string;
  subject: Subject;
}

const INTEREST_OF_EVENT = { product_view: "view", add_to_cart: "cart", purchase: "purchase" } as const;

/**
 * The price-drop and low-inventory audiences: who viewed or carted a variant
 * within the journey's look-back and has not bought it since. Views, carts
 * and purchases are recorded per person and variant while such a journey is
 * active; a catalog event starts a durable job that reads the variant's rows
 * in pages and enters each person of the audience, sending at once.
 *
 * Interest is a derived index of the events (which are stored), not a
 * reaction that must happen: it is written in batches (500 rows or 100 ms),
 * which makes a product view cost almost nothing more with these journeys
 * active. A kill -9 loses at most the last batch from the audiences; the
 * audience job and the plugin's stop write what is pending first.
 */
@injectable()
export class CatalogAudiences {
  private readonly interest: Collection<InterestRecord>;
  private readonly written = new Map<string, number>();
  private pending = new Map<string, InterestRecord>();
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(JOBS) private readonly jobs: Jobs,
    @inject(JOURNEY_DEFINITIONS) private readonly definitions: JourneyDefinitions,
    @inject(JOURNEY_ENGINE) private readonly engine: JourneyEngine,
  ) {
    this.interest = storage.collection(INTEREST);
  }

  /** Records an ecommerce event's products, when the company has a price-drop or low-inventory journey running. */
  async record(companyId: string, profileId: string, kind: keyof typeof INTEREST_OF_EVENT, items: readonly ProductItem[], at: number): Promise<void> {
    if ((await this.definitions.active(companyId, "price_drop")).length === 0 && (await this.definitions.active(companyId, "low_inventory")).length === 0) return;
    const interestKind: InterestKind = INTEREST_OF_EVENT[kind];
    const rows: InterestRecord[] = [];
    for (const item of items) {
      const id = interestId(companyId, item.productVariantId, profileId, interestKind);
      const last = this.written.get(id);
      if (last !== undefined && at >= last && at - last < INTEREST_RESOLUTION_MS) continue;
      rows.push({ id, companyId, profileId, kind: interestKind, at });
      if (this.written.size >= REMEMBERED_INTEREST) this.written.clear();
      this.written.set(id, at);
    }
    for (const row of rows) this.pending.set(row.id, row);
    if (this.pending.size >= INTEREST_BATCH) await this.flush();
    else if (this.pending.size > 0) this.flushTimer ??= setTimeout(() => void this.flush().catch(() => undefined), INTEREST_BATCH_MS).unref();
  }

  /** Writes the interest recorded since the last batch. */
  async flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const rows = [...this.pending.values()];
    this.pending = new Map();
    // Batches are written in turn, so a later view of a person is never overwritten by an earlier one.
    const done = this.flushing.then(() => (rows.length > 0 ? this.interest.upsertMany(rows) : undefined));
    this.flushing = done.catch(() => undefined);
    await done;
  }

  /** A price drop or low inventory: each active journey of that trigger gets an audience job. */
  async onCatalogEvent(trigger: "price_drop" | "low_inventory", event: CatalogVariantEvent): Promise<void> {
    for (const journey of await this.definitions.active(event.companyId, trigger)) {
      const payload: AudienceJob = { journeyId: journey.id, companyId: event.companyId, variantId: event.variantId, subject: catalogSubject(event) };
      await this.jobs.enqueue({ type: AUDIENCE_JOB, payload, key: audienceKey(payload), companyId: event.companyId });
    }
  }

  /** The audience job: the variant's interest rows in id order, a person's rows together, a page per transaction. */
  async run(payload: AudienceJob, context: JobContext): Promise<JobOutcome> {
    const journey = await this.definitions.get(payload.companyId, payload.journeyId);
    if (!journey || journey.status !== "active") return { entered: 0 };
    await this.flush();
    const since = this.clock.now() - durationMs(journey.audience.interactedWithin ?? DEFAULT_INTERACTED_WITHIN)!;
    let entered = 0;
    let after: string | undefined;
    let pending: { profileId: string; interestAt: number; purchasedAt: number } | undefined;
    const decide = async (person: NonNullable<typeof pending>) => {
      if (person.interestAt >= since && person.purchasedAt < person.interestAt && (await this.engine.enter(journey, person.profileId, payload.subject, { now: true }))) entered++;
    };
    do {
      const page = await this.interest.find({ where: { id: variantInterestRange(payload.companyId, payload.variantId) }, orderBy: [{ field: "id" }], limit: AUDIENCE_PAGE, ...(after ? { after } : {}) });
      await this.storage.transaction(async () => {
        for (const row of page.items) {
          if (pending && pending.profileId !== row.profileId) await decide(pending);
          if (!pending || pending.profileId !== row.profileId) pending = { profileId: row.profileId, interestAt: -1, purchasedAt: -1 };
          if (row.kind === "purchase") pending.purchasedAt = Math.max(pending.purchasedAt, row.at);
          else pending.interestAt = Math.max(pending.interestAt, row.at);
        }
      });
      after = page.nextCursor;
    } while (after && !context.signal.aborted);
    if (context.signal.aborted) {
      // The kit is stopping: the job starts over after the restart, and those already entered are not entered twice.
      await this.jobs.enqueue({ type: AUDIENCE_JOB, payload, key: audienceKey(payload), replace: true, companyId: payload.companyId });
      return { entered, stopped: true };
    }
    if (pending) await this.storage.transaction(() => decide(pending!));
    return { entered };
  }

  /** Forgets what these profiles viewed, carted and bought (privacy deletion). */
  forget(companyId: string, profileIds: readonly string[]): Promise<number> {
    for (const [id, row] of this.pending) if (row.companyId === companyId && profileIds.includes(row.profileId)) this.pending.delete(id);
    for (const key of this.written.keys()) if (profileIds.some((profileId) => key.includes(JSON.stringify(profileId)))) this.written.delete(key);
    return this.interest.deleteWhere({ companyId, profileId: { in: [...profileIds] } });
  }
}

const audienceKey = (payload: Pick<AudienceJob, "journeyId" | "variantId">) => `journeys:audience:${payload.journeyId}:${payload.variantId}`;
