import { CLOCK, inject, injectable, JOBS, STORAGE, type Clock, type Collection, type JobContext, type JobOutcome, type Jobs, type Storage } from "../../src/index.ts";
import { CATALOG_STORE, type BackInStockEvent, type CatalogStore } from "../catalog/index.ts";
import { durationMs } from "./definition.ts";
import type { JourneyDefinitions } from "./journey-definitions.ts";
import type { JourneyEngine } from "./journey-engine.ts";
import { STOCK_REQUESTS, stockRequestId, type StockRequestRecord, type Subject } from "./records.ts";
import { catalogSubject } from "./subjects.ts";
import { JOURNEY_DEFINITIONS, JOURNEY_ENGINE } from "./tokens.ts";

/** The custom event type of a back-in-stock request; its `productVariantId` property names the variant. */
export const BACK_IN_STOCK_REQUEST = "back_in_stock_request";
export const WAVE_JOB = "journeys.back-in-stock-wave";
/** Requests answered per storage transaction of a wave. */
export const WAVE_PAGE = 250;

export interface WaveJob {
  journeyId: string;
  companyId: string;
  variantId: string;
  subject: Subject;
}

export type RequestOutcome = "recorded" | "already_waiting" | "available";

/**
 * Back in stock: people ask about a variant while it cannot be bought; when a
 * catalog save makes it available, a durable job answers them in waves, first
 * come first served: each wave tells at most `messagesPerUnit` times the
 * variant's inventory (all of them when the catalog gives no quantity), then
 * waits the pacing interval and looks at the catalog again. Each request is
 * answered once; the waiting ones are the job's cursor, read a page at a time,
 * so a wave of any size holds one page in memory.
 */
@injectable()
export class BackInStock {
  private readonly requests: Collection<StockRequestRecord>;

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(JOBS) private readonly jobs: Jobs,
    @inject(CATALOG_STORE) private readonly catalog: CatalogStore,
    @inject(JOURNEY_DEFINITIONS) private readonly definitions: JourneyDefinitions,
    @inject(JOURNEY_ENGINE) private readonly engine: JourneyEngine,
  ) {
    this.requests = storage.collection(STOCK_REQUESTS);
  }

  /** Records a person's request, unless the variant can be bought now or they already wait for it. */
  async request(companyId: string, profileId: string, variantId: string, productId?: string): Promise<RequestOutcome> {
    const known = await this.catalog.getVariant(companyId, variantId);
    if (known?.variant.availableForPurchase) return "available";
    const id = stockRequestId(companyId, variantId, profileId);
    if ((await this.requests.get(id))?.state === "waiting") return "already_waiting";
    const now = this.clock.now();
    await this.requests.upsert({
      id,
      companyId,
      variantId,
      ...((productId ?? known?.productId) !== undefined ? { productId: productId ?? known?.productId } : {}),
      profileId,
      state: "waiting",
      seq: `${String(now).padStart(13, "0")}${id}`,
      requestedAt: now,
    });
    return "recorded";
  }

  /** A catalog save made the variant available: each active back-in-stock journey of the company gets a wave. */
  async onBackInStock(event: BackInStockEvent): Promise<void> {
    for (const journey of await this.definitions.active(event.companyId, "back_in_stock")) {
      const payload: WaveJob = { journeyId: journey.id, companyId: event.companyId, variantId: event.variantId, subject: catalogSubject(event) };
      await this.jobs.enqueue({ type: WAVE_JOB, payload, key: waveKey(payload), companyId: event.companyId });
    }
  }

  /** The wave job. */
  async wave(payload: WaveJob, context: JobContext): Promise<JobOutcome> {
    const journey = await this.definitions.get(payload.companyId, payload.journeyId);
    if (!journey || journey.status !== "active") return { told: 0, reason: "journey paused or deleted" };
    const current = await this.catalog.getVariant(payload.companyId, payload.variantId);
    if (!current?.variant.availableForPurchase) return { told: 0, reason: "not available" };
    const pacing = journey.pacing!;
    const quantity = current.variant.inventoryQuantity;
    const allowance = quantity === undefined ? Infinity : Math.max(0, Math.ceil(quantity * pacing.messagesPerUnit));
    let told = 0;
    for (;;) {
      const room = Math.min(WAVE_PAGE, allowance - told);
      const page = room > 0 ? await this.#waiting(payload, room) : [];
      if (page.length === 0) break;
      await this.storage.transaction(async () => {
        for (const request of page) {
          // Answered in the transaction that sends: a crash never answers a request without its message, nor twice.
          if (!(await this.requests.update(request.id, { state: "answered" }, { where: { state: "waiting" } }))) continue;
          await this.engine.enter(journey, request.profileId, payload.subject, { now: true });
        }
      });
      told += page.length;
      if (context.signal.aborted) break;
    }
    if ((await this.#waiting(payload, 1)).length > 0) {
      // More people wait than this wave could tell: the next wave looks at the inventory again after the interval.
      const runAt = context.signal.aborted ? this.clock.now() : this.clock.now() + durationMs(pacing.interval)!;
      await this.jobs.enqueue({ type: WAVE_JOB, payload, key: waveKey(payload), replace: true, runAt, companyId: payload.companyId });
    }
    return { told };
  }

  /** Forgets the requests of these profiles (privacy deletion). */
  forget(companyId: string, profileIds: readonly string[]): Promise<number> {
    return this.requests.deleteWhere({ companyId, profileId: { in: [...profileIds] } });
  }

  async #waiting(payload: WaveJob, limit: number): Promise<StockRequestRecord[]> {
    const where = { companyId: payload.companyId, variantId: payload.variantId, state: "waiting" as const };
    return (await this.requests.find({ where, orderBy: [{ field: "seq" }], limit })).items;
  }
}

const waveKey = (payload: Pick<WaveJob, "journeyId" | "variantId">) => `journeys:wave:${payload.journeyId}:${payload.variantId}`;
