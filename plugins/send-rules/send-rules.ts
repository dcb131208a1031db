import {
  CLOCK,
  inject,
  injectable,
  OUTBOX,
  STORAGE,
  type Clock,
  type Collection,
  type DataSubject,
  type Outbox,
  type OutboxMessage,
  type Storage,
} from "../../src/index.ts";
import { SUBSCRIPTIONS_SERVICE, type SubscriptionsService } from "../subscriptions/index.ts";
import { quietUntil, startOfLocalDay, isTimeZone } from "./quiet-hours.ts";
import { SENDS, type SendRecord } from "./records.ts";
import type { SendPolicies, SendPolicy } from "./send-policies.ts";
import type { PhoneTimeZones } from "./time-zones.ts";
import { PHONE_TIME_ZONES, SEND_POLICIES } from "./tokens.ts";

/** The profile attribute that names a person's IANA time zone. */
export const TIME_ZONE_ATTRIBUTE = "timeZone";

/** A text to one person, as journeys and campaigns hand it to the rules. */
export interface RuledText {
  companyId: string;
  /** TEXT (default): an SMS or MMS; EMAIL: an email, whose consent is the address's EMAIL subscription. */
  channel?: "TEXT" | "EMAIL";
  /** E.164, or an email address. The daily cap counts the marketing messages each address received, from journeys and campaigns alike. */
  to: string;
  /** Marketing texts pass every rule; transactional ones need transactional consent only. */
  messageType: "MARKETING" | "TRANSACTIONAL";
  body: string;
  mediaUrl?: string;
  /** An email's subject. */
  subject?: string;
  /** The outbox kind (`journey`, `campaign`). */
  kind: string;
  /** Stable per logical message: a send that runs again is recognised, not sent or counted twice. */
  idempotencyKey: string;
  tags?: Record<string, string>;
  /** The person's profile attributes, whose `timeZone` comes first. */
  attributes?: Readonly<Record<string, unknown>>;
}

export type SkipReason = "no_consent" | "frequency_cap";

export type SendOutcome =
  | { status: "sent"; message: OutboxMessage }
  /** In quiet hours: send again at `until`, when they end. */
  | { status: "deferred"; reason: "quiet_hours"; until: number }
  | { status: "skipped"; reason: SkipReason };

/**
 * The rules every journey and campaign text passes, at the moment it would
 * go: marketing consent for the channel (checked now, so a person who opted
 * out while waiting is skipped), quiet hours in the person's time zone
 * (deferred, never dropped) and the daily cap per person across journeys and
 * campaigns. Transactional texts need transactional consent and are exempt
 * from quiet hours and the cap. See docs/journeys.md.
 */
@injectable()
export class SendRules {
  private readonly sends: Collection<SendRecord>;

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(OUTBOX) private readonly outbox: Outbox,
    @inject(SUBSCRIPTIONS_SERVICE) private readonly subscriptions: SubscriptionsService,
    @inject(SEND_POLICIES) readonly policies: SendPolicies,
    @inject(PHONE_TIME_ZONES) private readonly phoneZones: PhoneTimeZones,
  ) {
    this.sends = storage.collection(SENDS);
  }

  /**
   * Sends the text through the outbox if the rules allow it now, in one
   * storage transaction with the cap's record: a crash leaves both or neither.
   */
  send(text: RuledText): Promise<SendOutcome> {
    const marketing = text.messageType === "MARKETING";
    return this.storage.transaction(async () => {
      const recordId = `${text.companyId}:${text.idempotencyKey}`;
      if (marketing && (await this.sends.get(recordId))) return { status: "sent", message: await this.#toOutbox(text) };
      const channel = text.channel ?? "TEXT";
      const user = channel === "TEXT" ? { phone: text.to } : { email: text.to };
      const consent = await this.subscriptions.isEligible(text.companyId, user, { type: text.messageType, channel });
      if (!consent.isEligible) return { status: "skipped", reason: "no_consent" };
      if (!marketing) return { status: "sent", message: await this.#toOutbox(text) };
      const policy = await this.policies.get(text.companyId);
      const now = this.clock.now();
      // Read only when a rule needs it: a number's zone costs a parse of the number.
      let zone: string | undefined;
      const zoneOfText = () => (zone ??= this.zoneOf(policy, text));
      const until = policy.quietHours ? quietUntil(now, zoneOfText(), policy.quietHours) : undefined;
      if (until !== undefined) return { status: "deferred", reason: "quiet_hours", until };
      if (policy.dailyCap !== null) {
        // One at a time per person from here to the commit: two sends at once count one after the other,
        // not both below the cap (a person may have no send yet, so a key rather than a record is held).
        await this.sends.lockKey(JSON.stringify([text.companyId, text.to]));
        const today = await this.sends.count({ companyId: text.companyId, to: text.to, at: { gte: startOfLocalDay(now, zoneOfText()) } });
        if (today >= policy.dailyCap) return { status: "skipped", reason: "frequency_cap" };
      }
      await this.sends.insert({ id: recordId, companyId: text.companyId, to: text.to, at: now });
      return { status: "sent", message: await this.#toOutbox(text) };
    });
  }

  /** The person's time zone: their profile's `timeZone`, else their number's region's, else the company's. */
  zoneOf(policy: SendPolicy, person: { to: string; attributes?: Readonly<Record<string, unknown>> }): string {
    const fromProfile = person.attributes?.[TIME_ZONE_ATTRIBUTE];
    if (typeof fromProfile === "string" && isTimeZone(fromProfile)) return fromProfile;
    return this.phoneZones.zoneOf(person.to) ?? policy.timeZone;
  }

  /** Forgets the sends counted for a subject's phone and email (privacy requests). */
  async deleteSubjectData(subject: DataSubject): Promise<number> {
    const addresses = [subject.phone?.trim(), subject.email?.trim().toLowerCase()].filter((address): address is string => address !== undefined);
    if (addresses.length === 0) return 0;
    const where = { companyId: subject.companyId, to: { in: addresses } };
    return this.sends.deleteWhere(where);
  }

  #toOutbox(text: RuledText): Promise<OutboxMessage> {
    if (text.channel === "EMAIL") {
      const { companyId, to, body, subject, kind, idempotencyKey, tags } = text;
      return this.outbox.sendEmail({ companyId, to, subject: subject ?? "", text: body, kind, idempotencyKey, ...(tags ? { tags } : {}) });
    }
    return this.outbox.send({
      companyId: text.companyId,
      to: text.to,
      body: text.body,
      ...(text.mediaUrl !== undefined ? { mediaUrl: text.mediaUrl } : {}),
      kind: text.kind,
      idempotencyKey: text.idempotencyKey,
      ...(text.tags ? { tags: text.tags } : {}),
    });
  }
}
