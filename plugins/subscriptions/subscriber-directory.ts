import { inject, injectable, isSortableId, type Where } from "../../src/index.ts";
import type { ChangeAction, Subscriber } from "./records.ts";
import type { SubscriptionStore } from "./subscription-store.ts";
import { SUBSCRIPTION_STORE } from "./tokens.ts";

/** The most subscribers one page holds. */
export const MAX_SUBSCRIBER_PAGE = 200;

export interface SubscriberPageQuery {
  /**
   * A phone (`+1312555`, `(312) 555`: digits are a prefix of the E.164 number),
   * an email or its beginning, or a subscriber id. Absent: every subscriber, newest first.
   */
  search?: string;
  /** The `nextCursor` of the previous page of the same search. */
  after?: string;
  /** Default 50, at most {@link MAX_SUBSCRIBER_PAGE}. */
  limit?: number;
}

export interface SubscriberPage {
  items: Subscriber[];
  /** Present when more follow. */
  nextCursor?: string;
}

/** One day's count of each change action asked for. */
export interface DailyChanges {
  /** Epoch ms of the day's start. */
  day: number;
  counts: Partial<Record<ChangeAction, number>>;
}

const PHONE_SEARCH = /^\+?[\d\s().-]+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Reads over a company's subscribers for people (the console): pages in a
 * stable order, each a keyset read on an index (never an offset), so the
 * thousandth page costs what the first does; and counts of changes per day.
 */
@injectable()
export class SubscriberDirectory {
  constructor(@inject(SUBSCRIPTION_STORE) private readonly store: SubscriptionStore) {}

  async page(companyId: string, query: SubscriberPageQuery = {}): Promise<SubscriberPage> {
    const limit = Math.min(Math.max(Math.trunc(query.limit ?? 50), 1), MAX_SUBSCRIBER_PAGE);
    const search = query.search?.trim() ?? "";
    const subscribers = this.store.subscribers;
    if (search === "") {
      return subscribers.find({ where: { companyId }, orderBy: [{ field: "createdAt", direction: "desc" }, { field: "id", direction: "desc" }], limit, after: query.after });
    }
    // Subscribers made before ids were time-ordered have UUIDs. An id-shaped text that names nobody may still begin an email.
    if (UUID.test(search) || isSortableId(search)) {
      const subscriber = await subscribers.get(search.toLowerCase());
      if (subscriber?.companyId === companyId) return { items: [subscriber] };
      if (UUID.test(search)) return { items: [] };
    }
    if (PHONE_SEARCH.test(search) && /\d/.test(search)) {
      const digits = search.replace(/\D/g, "");
      const where: Where<Subscriber> = { companyId, phone: prefixRange(`+${digits}`) };
      return subscribers.find({ where, orderBy: [{ field: "phone" }], limit, after: query.after });
    }
    const where: Where<Subscriber> = { companyId, email: prefixRange(search.toLowerCase()) };
    return subscribers.find({ where, orderBy: [{ field: "email" }], limit, after: query.after });
  }

  /**
   * How many changes of each action the company recorded on each day of
   * `days` (each `[start, end)`, epoch ms): one indexed count per day and action.
   */
  async dailyChanges(companyId: string, days: readonly { start: number; end: number }[], actions: readonly ChangeAction[]): Promise<DailyChanges[]> {
    const daily: DailyChanges[] = [];
    for (const { start, end } of days) {
      const counts: DailyChanges["counts"] = {};
      for (const action of actions) counts[action] = await this.store.changes.count({ companyId, action, at: { gte: start, lt: end } });
      daily.push({ day: start, counts });
    }
    return daily;
  }
}

/** Every text starting with `prefix` (not empty), as a range of the where-language: up to the prefix with its last character's successor. */
function prefixRange(prefix: string): { gte: string; lt: string } {
  return { gte: prefix, lt: `${prefix.slice(0, -1)}${String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1)}` };
}
