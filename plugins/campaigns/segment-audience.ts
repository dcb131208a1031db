import { CLOCK, inject, injectable, type Clock } from "../../src/index.ts";
import { CATALOG_API, type CatalogApi, type CatalogProduct } from "../catalog/index.ts";
import { PROFILE_PAGES, type EventKind, type EventRecord, type PagedPerson, type ProfilePages } from "../profiles/index.ts";
import { SUBSCRIPTIONS_SERVICE, type SubscriptionsService } from "../subscriptions/index.ts";
import { durationMs, longestWithin, ruleUses, type AttributeCondition, type ConsentCondition, type EventCondition, type ProductCondition, type SegmentRule } from "./segment-rule.ts";

/** Profiles read per page of an audience scan. */
export const AUDIENCE_PAGE = 500;

const ACTION_KINDS: Readonly<Record<ProductCondition["action"], EventKind>> = { viewed: "product_view", carted: "add_to_cart", bought: "purchase" };

/** What one page's evaluation knows beside the people: their consent, and the catalog's products. */
interface PageContext {
  now: number;
  consent: Map<string, Map<string, ConsentCondition["state"]>>;
  products: Map<string, CatalogProduct | undefined>;
}

/**
 * A segment's rule evaluated over a company's live profiles, a page at a
 * time: each page is a few bulk reads (profiles, identifiers, attributes,
 * events in the rule's longest window, consent), then the rule in memory.
 * One person is one live profile, whatever number of identifiers matched.
 */
@injectable()
export class SegmentAudience {
  constructor(
    @inject(CLOCK) private readonly clock: Clock,
    @inject(PROFILE_PAGES) private readonly pages: ProfilePages,
    @inject(SUBSCRIPTIONS_SERVICE) private readonly subscriptions: SubscriptionsService,
    @inject(CATALOG_API) private readonly catalog: CatalogApi,
  ) {}

  /** One page of profiles and who of them the rule matches; `nextCursor` while more follow. */
  async page(companyId: string, rule: SegmentRule, options: { after?: string; limit?: number; products?: Map<string, CatalogProduct | undefined> } = {}): Promise<{ matched: PagedPerson[]; scanned: number; nextCursor?: string }> {
    const now = this.clock.now();
    const window = longestWithin(rule);
    const { people, nextCursor } = await this.pages.page(companyId, {
      limit: options.limit ?? AUDIENCE_PAGE,
      ...(options.after !== undefined ? { after: options.after } : {}),
      ...(window !== undefined ? { eventsSince: now - window } : {}),
    });
    const context: PageContext = { now, consent: new Map(), products: options.products ?? new Map() };
    if (ruleUses(rule, "consent")) await this.#readConsent(companyId, people, context);
    if (ruleUses(rule, "product")) await this.#readProducts(companyId, people, context);
    const matched = people.filter((person) => matches(rule, person, context));
    return { matched, scanned: people.length, ...(nextCursor !== undefined ? { nextCursor } : {}) };
  }

  /** Counts the whole audience and keeps the first `sample` people. */
  async preview(companyId: string, rule: SegmentRule, sample: number): Promise<{ size: number; scanned: number; sample: PagedPerson[] }> {
    const products = new Map<string, CatalogProduct | undefined>();
    const kept: PagedPerson[] = [];
    let size = 0;
    let scanned = 0;
    let after: string | undefined;
    do {
      const page = await this.page(companyId, rule, { ...(after !== undefined ? { after } : {}), products });
      size += page.matched.length;
      scanned += page.scanned;
      kept.push(...page.matched.slice(0, Math.max(sample - kept.length, 0)));
      after = page.nextCursor;
      // A million profiles are two thousand pages: on a synchronous storage the scan would hold the process
      // (every other request, every job) until it ends.
      if (after !== undefined) await new Promise((resolve) => setImmediate(resolve));
    } while (after !== undefined);
    return { size, scanned, sample: kept };
  }

  async #readConsent(companyId: string, people: readonly PagedPerson[], context: PageContext): Promise<void> {
    const reachable = people.filter((person) => person.phone !== undefined || person.email !== undefined);
    const users = reachable.map((person) => ({ ...(person.phone !== undefined ? { phone: person.phone } : {}), ...(person.email !== undefined ? { email: person.email } : {}) }));
    const rows = users.length === 0 ? [] : await this.subscriptions.eligibilityOfMany(companyId, users);
    reachable.forEach((person, index) => {
      const states = new Map<string, ConsentCondition["state"]>();
      for (const { subscription, eligibility } of rows[index] ?? []) {
        const state = eligibility.isEligible ? "active" : eligibility.ineligibilityReason === "OPTED_OUT" ? "unsubscribed" : "pending";
        states.set(`${subscription.channel}:${subscription.type}`, state);
      }
      context.consent.set(person.id, states);
    });
  }

  async #readProducts(companyId: string, people: readonly PagedPerson[], context: PageContext): Promise<void> {
    for (const person of people) {
      for (const event of person.events) {
        for (const item of event.items ?? []) {
          if (!context.products.has(item.productId)) context.products.set(item.productId, await this.catalog.getProduct(companyId, item.productId));
        }
      }
    }
  }
}

function matches(rule: SegmentRule, person: PagedPerson, context: PageContext): boolean {
  if ("and" in rule) return rule.and.every((inner) => matches(inner, person, context));
  if ("or" in rule) return rule.or.some((inner) => matches(inner, person, context));
  if ("not" in rule) return !matches(rule.not, person, context);
  if ("consent" in rule) return (context.consent.get(person.id)?.get(`${rule.consent.channel}:${rule.consent.type}`) ?? "none") === rule.consent.state;
  if ("attribute" in rule) return attributeMatches(rule.attribute, person.attributes[rule.attribute.name]);
  if ("event" in rule) return eventMatches(rule.event, person.events, context.now) === rule.event.did;
  return productMatches(rule.product, person.events, context);
}

function attributeMatches(condition: AttributeCondition, actual: string | number | boolean | undefined): boolean {
  const expected = condition.value;
  if (condition.op === "exists") return actual !== undefined;
  if (condition.op === "ne") return actual !== expected;
  if (actual === undefined) return false;
  if (condition.op === "eq") return actual === expected;
  if (condition.op === "contains") return String(actual).toLowerCase().includes(String(expected).toLowerCase());
  if (typeof actual !== typeof expected || typeof actual === "boolean") return false;
  const [a, b] = [actual as number | string, expected as number | string];
  return condition.op === "gt" ? a > b : condition.op === "gte" ? a >= b : condition.op === "lt" ? a < b : a <= b;
}

const inWindow = (event: EventRecord, within: string, now: number) => event.occurredAt >= now - durationMs(within) && event.occurredAt <= now;

function eventMatches(condition: EventCondition, events: readonly EventRecord[], now: number): boolean {
  return events.some(
    (event) =>
      event.kind === condition.kind &&
      inWindow(event, condition.within, now) &&
      (condition.type === undefined || event.type === condition.type) &&
      Object.entries(condition.properties ?? {}).every(([key, value]) => event.properties?.[key] === value),
  );
}

function productMatches(condition: ProductCondition, events: readonly EventRecord[], context: PageContext): boolean {
  const kind = ACTION_KINDS[condition.action];
  return events.some(
    (event) =>
      event.kind === kind &&
      inWindow(event, condition.within, context.now) &&
      (event.items ?? []).some((item) => {
        const price = item.price[0]?.value;
        if (condition.minPrice !== undefined && (price === undefined || price < condition.minPrice)) return false;
        if (condition.maxPrice !== undefined && (price === undefined || price > condition.maxPrice)) return false;
        if (condition.category === undefined && condition.collection === undefined && condition.brand === undefined && condition.tag === undefined) return true;
        const product = context.products.get(item.productId);
        if (!product) return false;
        return (
          (condition.category === undefined || (product.categories ?? []).includes(condition.category)) &&
          (condition.collection === undefined || (product.collections ?? []).includes(condition.collection)) &&
          (condition.brand === undefined || product.brand === condition.brand) &&
          (condition.tag === undefined || (product.tags ?? []).includes(condition.tag))
        );
      }),
  );
}
