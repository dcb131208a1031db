import { CLOCK, inject, injectable, sortableId, STORAGE, type Clock, type Collection, type Storage } from "../../src/index.ts";
import { JOURNEY_LOG, type JourneyLogRecord, type LogKind } from "./records.ts";

/** Why a person left a journey without its message, as the stats list them. */
export const SKIP_REASONS = ["no_consent", "frequency_cap", "missing_macro", "no_phone", "audience", "email_unavailable"] as const;
export const EXIT_REASONS = ["purchased", "journey_paused", "journey_deleted", "person_unknown", "no_product"] as const;

/** What a journey has done, as `reachkit journeys stats` and `GET /v1/journeys/:id/stats` show it. */
export interface JourneyStats {
  entered: number;
  sent: number;
  /** Sends put off to the end of quiet hours (a person may be deferred more than once). */
  deferredForQuietHours: number;
  skipped: Record<string, number>;
  exited: Record<string, number>;
  /** Purchases within 7 days of one of the journey's messages, and their order totals by currency. */
  purchases: number;
  revenue: Record<string, number>;
}

/** The append-only log of each journey's entries, sends, skips, deferrals, exits and attributed purchases. */
@injectable()
export class JourneyLog {
  private readonly log: Collection<JourneyLogRecord>;

  constructor(
    @inject(STORAGE) storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
  ) {
    this.log = storage.collection(JOURNEY_LOG);
  }

  async add(entry: { companyId: string; journeyId: string; profileId: string; kind: LogKind; reason?: string }): Promise<void> {
    const now = this.clock.now();
    await this.log.insert({ id: sortableId(now), ...entry, at: now });
  }

  /** A purchase attributed to a journey; the id makes a repeated purchase event count once. */
  async purchase(entry: { companyId: string; journeyId: string; profileId: string; eventId: string; total: number; currency: string }): Promise<void> {
    const { eventId, ...fields } = entry;
    await this.log.upsert({ id: JSON.stringify([entry.journeyId, eventId]), ...fields, kind: "purchase", at: this.clock.now() });
  }

  async stats(journeyId: string): Promise<JourneyStats> {
    const count = (kind: LogKind, reason?: string) => this.log.count({ journeyId, kind, ...(reason !== undefined ? { reason } : {}) });
    const byReason = async (kind: LogKind, reasons: readonly string[]) =>
      Object.fromEntries(await Promise.all(reasons.map(async (reason) => [reason, await count(kind, reason)] as const)));
    const [entered, sent, deferredForQuietHours, skipped, exited] = await Promise.all([
      count("entered"),
      count("sent"),
      count("deferred", "quiet_hours"),
      byReason("skipped", SKIP_REASONS),
      byReason("exited", EXIT_REASONS),
    ]);
    const revenue: Record<string, number> = {};
    let purchases = 0;
    let after: string | undefined;
    do {
      const page = await this.log.find({ where: { journeyId, kind: "purchase" }, limit: 1000, ...(after ? { after } : {}) });
      for (const purchase of page.items) {
        purchases++;
        const currency = purchase.currency ?? "USD";
        revenue[currency] = Math.round(((revenue[currency] ?? 0) + (purchase.total ?? 0)) * 100) / 100;
      }
      after = page.nextCursor;
    } while (after);
    return { entered, sent, deferredForQuietHours, skipped, exited, purchases, revenue };
  }

  /** Forgets the entries about these profiles (privacy deletion). */
  forget(companyId: string, profileIds: readonly string[]): Promise<number> {
    return this.log.deleteWhere({ companyId, profileId: { in: [...profileIds] } });
  }
}
