import { CLOCK, EVENTS, inject, injectable, type Clock, type EventBus } from "../../src/index.ts";
import { PROFILES_SERVICE, type ProfileEventRecorded, type ProfilesService } from "../profiles/index.ts";
import type { SubscriptionEvent } from "../subscriptions/index.ts";
import { BACK_IN_STOCK_REQUEST, type BackInStock } from "./back-in-stock.ts";
import type { CatalogAudiences } from "./catalog-audiences.ts";
import { durationMs } from "./definition.ts";
import type { JourneyDefinitions } from "./journey-definitions.ts";
import type { JourneyEngine } from "./journey-engine.ts";
import type { JourneyLog } from "./journey-log.ts";
import { BACK_IN_STOCK, CATALOG_AUDIENCES, JOURNEY_DEFINITIONS, JOURNEY_ENGINE, JOURNEY_LOG_SERVICE } from "./tokens.ts";

/** Purchases within this long after a journey's message count for it. */
export const ATTRIBUTION_MS = 7 * 24 * 60 * 60_000;
const REMEMBERED_ENTRIES = 100_000;
const REMEMBERED_ENTRY_MS = 60 * 60_000;

/**
 * What starts and ends journeys: the profiles', catalog's and subscriptions'
 * domain events, heard inside the transaction of the change that caused
 * them, so the enrollment and its job commit with the event or not at all.
 * Each listener does little: a product view of a person already in the
 * browse journey costs no storage at all.
 */
@injectable()
export class JourneyTriggers {
  /** Journey and person → until when an abandonment entry is known to be taken (its window). */
  private readonly entered = new Map<string, number>();

  constructor(
    @inject(EVENTS) private readonly events: EventBus,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(PROFILES_SERVICE) private readonly profiles: ProfilesService,
    @inject(JOURNEY_DEFINITIONS) private readonly definitions: JourneyDefinitions,
    @inject(JOURNEY_ENGINE) private readonly engine: JourneyEngine,
    @inject(JOURNEY_LOG_SERVICE) private readonly log: JourneyLog,
    @inject(BACK_IN_STOCK) private readonly backInStock: BackInStock,
    @inject(CATALOG_AUDIENCES) private readonly audiences: CatalogAudiences,
  ) {}

  /** Starts listening; returns the function that stops. */
  listen(): () => void {
    const stops = [
      this.events.onInTransaction("profile.event.recorded", (event) => this.#profileEvent(event)),
      this.events.onInTransaction("catalog.variant.back_in_stock", (event) => this.backInStock.onBackInStock(event)),
      this.events.onInTransaction("catalog.variant.price_dropped", (event) => this.audiences.onCatalogEvent("price_drop", event)),
      this.events.onInTransaction("catalog.variant.low_inventory", (event) => this.audiences.onCatalogEvent("low_inventory", event)),
      this.events.onInTransaction("subscription.created", (event) => this.#subscribed(event)),
      this.events.onInTransaction("subscription.confirmed", (event) => this.#subscribed(event)),
      this.events.onInTransaction("profile.erased", ({ companyId, profileIds }) => this.forget(companyId, profileIds).then(() => undefined)),
    ];
    return () => stops.forEach((stop) => stop());
  }

  /** Removes people from every journey and forgets their requests, interest and log entries. */
  async forget(companyId: string, profileIds: readonly string[]): Promise<number> {
    for (const key of this.entered.keys()) if (profileIds.some((profileId) => key.endsWith(`\u0000${profileId}`))) this.entered.delete(key);
    return (
      (await this.engine.forget(companyId, profileIds)) +
      (await this.backInStock.forget(companyId, profileIds)) +
      (await this.audiences.forget(companyId, profileIds)) +
      (await this.log.forget(companyId, profileIds))
    );
  }

  async #profileEvent(event: ProfileEventRecorded): Promise<void> {
    const { companyId, profileId } = event;
    if (event.kind === "custom") {
      const variantId = event.type === BACK_IN_STOCK_REQUEST ? event.properties?.productVariantId : undefined;
      if (typeof variantId === "string" && variantId !== "") {
        const productId = event.properties?.productId;
        await this.backInStock.request(companyId, profileId, variantId, typeof productId === "string" ? productId : undefined);
      }
      return;
    }
    if (event.items) await this.audiences.record(companyId, profileId, event.kind, event.items, event.occurredAt);
    if (event.kind === "add_to_cart") await this.#abandonment("cart_abandonment", companyId, profileId);
    else if (event.kind === "product_view") await this.#abandonment("browse_abandonment", companyId, profileId);
    else await this.#purchased(event);
  }

  /** Enters the person in each abandonment journey they are not in yet (once per window). */
  async #abandonment(trigger: "cart_abandonment" | "browse_abandonment", companyId: string, profileId: string): Promise<void> {
    const now = this.clock.now();
    for (const journey of await this.definitions.active(companyId, trigger)) {
      const key = `${journey.id}\u0000${profileId}`;
      if ((this.entered.get(key) ?? 0) > now) continue;
      await this.engine.enter(journey, profileId, undefined);
      if (this.entered.size >= REMEMBERED_ENTRIES) this.entered.clear();
      // Entered now, or in it already: the window keeps them out at least this long (an hour at most, so a
      // change of the window, or an entry another process ended early, is seen within it).
      this.entered.set(key, now + Math.min(durationMs(journey.window)!, REMEMBERED_ENTRY_MS));
    }
  }

  /** A purchase: waiting abandonment enrollments end, and the journeys that messaged the person within 7 days count it. */
  async #purchased(event: ProfileEventRecorded): Promise<void> {
    const { companyId, profileId } = event;
    await this.engine.exitOnPurchase(companyId, profileId);
    const items = event.items ?? [];
    const currency = items[0]?.price[0]?.currency ?? "USD";
    const total = items.reduce((sum, item) => sum + (item.price.find((price) => (price.currency ?? "USD") === currency)?.value ?? 0) * (item.quantity ?? 1), 0);
    const journeys = new Set((await this.engine.sentSince(companyId, profileId, this.clock.now() - ATTRIBUTION_MS)).map((enrollment) => enrollment.journeyId));
    for (const journeyId of journeys) await this.log.purchase({ companyId, journeyId, profileId, eventId: event.eventId, total, currency });
  }

  /** A marketing text subscription became active: the welcome journeys start. */
  async #subscribed(event: SubscriptionEvent): Promise<void> {
    if (event.state !== "active" || event.type !== "MARKETING" || event.channel !== "TEXT") return;
    const journeys = await this.definitions.active(event.companyId, "welcome");
    if (journeys.length === 0) return;
    const profileId = await this.profiles.find(event.companyId, { kind: "phone", value: event.address });
    if (profileId === undefined) return;
    for (const journey of journeys) await this.engine.enter(journey, profileId, undefined);
  }
}
