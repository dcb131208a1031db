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
  async send(text: RuledText): Promise<SendOutcome> {
    return (await this.sendMany([text]))[0]!;
  }

  /**
   * `send` for many texts of one company (a campaign's page), in one transaction and with the outcome each
   * would have had sent one after the other: one read of the texts already let through, one of consent, one of
   * the policy, one count of the day's sends for the cap, one write of the new sends and one of their messages.
   */
  sendMany(texts: readonly RuledText[]): Promise<SendOutcome[]> {
    const companyId = texts[0]?.companyId;
    if (companyId === undefined) return Promise.resolve([]);
    if (texts.some((text) => text.companyId !== companyId)) return Promise.reject(new TypeError("sendMany takes the texts of one company"));
    return this.storage.transaction(async () => {
      const now = this.clock.now();
      const recordIdOf = (text: RuledText) => `${companyId}:${text.idempotencyKey}`;
      const marketing = texts.filter((text) => text.messageType === "MARKETING");
      const policy = marketing.length === 0 ? undefined : await this.policies.get(companyId);
      if (policy?.dailyCap != null) await this.#holdPeople(companyId, marketing);
      const recorded = new Set(marketing.length === 0 ? [] : (await this.sends.find({ where: { id: { in: [...new Set(marketing.map(recordIdOf))] } } })).items.map((send) => send.id));
      const eligible = await this.#consentOf(companyId, texts);
      // Read only when a rule needs it: a number's zone costs a parse of the number.
      const zones = new Map<RuledText, string>();
      const zoneOf = (text: RuledText) => zones.get(text) ?? zones.set(text, this.zoneOf(policy!, text)).get(text)!;
      // The marketing texts the rules are asked about: new (not let through before) and with consent.
      const ruled = texts.map((text, i) => text.messageType === "MARKETING" && !recorded.has(recordIdOf(text)) && eligible[i]);
      const quietEnds = texts.map((text, i) => (ruled[i] && policy?.quietHours ? quietUntil(now, zoneOf(text), policy.quietHours) : undefined));
      const capped = texts.filter((_, i) => ruled[i] && quietEnds[i] === undefined);
      const counts = policy?.dailyCap == null ? undefined : await this.#sendsToday(companyId, capped, now, zoneOf);
      const added: SendRecord[] = [];
      const outcomes = texts.map((text, i): SendOutcome | "send" => {
        const isMarketing = text.messageType === "MARKETING";
        if (isMarketing && recorded.has(recordIdOf(text))) return "send";
        if (!eligible[i]) return { status: "skipped", reason: "no_consent" };
        if (!isMarketing) return "send";
        const until = quietEnds[i];
        if (until !== undefined) return { status: "deferred", reason: "quiet_hours", until };
        if (counts && counts.today(text) >= policy!.dailyCap!) return { status: "skipped", reason: "frequency_cap" };
        counts?.add(text);
        recorded.add(recordIdOf(text));
        added.push({ id: recordIdOf(text), companyId, to: text.to, at: now });
        return "send";
      });
      if (added.length > 0) await this.sends.upsertMany(added);
      const messages = await this.#toOutbox(texts.filter((_, i) => outcomes[i] === "send"));
      let next = 0;
      return outcomes.map((outcome) => (outcome === "send" ? { status: "sent", message: messages[next++]! } : outcome));
    });
  }

  /** Whether each text's person has consent for its type and channel now: one read for them all. */
  async #consentOf(companyId: string, texts: readonly RuledText[]): Promise<boolean[]> {
    const users = texts.map((text) => ((text.channel ?? "TEXT") === "TEXT" ? { phone: text.to } : { email: text.to }));
    const eligibilities = await this.subscriptions.eligibilityOfMany(companyId, users);
    return texts.map((text, i) =>
      eligibilities[i]!.some(({ subscription, eligibility }) => subscription.type === text.messageType && subscription.channel === (text.channel ?? "TEXT") && eligibility.isEligible),
    );
  }

  /**
   * Holds the texts' people from here to the commit, for the cap: two sends at once to a person count one after
   * the other, not both below the cap (a person may have no send yet, so a key rather than a record is held;
   * keys in one order, so that two pages holding some of the same people wait for each other, never deadlock).
   */
  async #holdPeople(companyId: string, texts: readonly RuledText[]): Promise<void> {
    for (const to of [...new Set(texts.map((text) => text.to))].sort()) await this.sends.lockKey(JSON.stringify([companyId, to]));
  }

  /** The sends each person of `texts` (held) received today in their zone, for the cap, in one read. */
  async #sendsToday(companyId: string, texts: readonly RuledText[], now: number, zoneOf: (text: RuledText) => string) {
    const addresses = [...new Set(texts.map((text) => text.to))];
    const startOf = (text: RuledText) => startOfLocalDay(now, zoneOf(text));
    const since = texts.length === 0 ? now : Math.min(...texts.map(startOf));
    const sentAt = new Map<string, number[]>();
    const add = (to: string, at: number) => {
      const times = sentAt.get(to);
      if (times) times.push(at);
      else sentAt.set(to, [at]);
    };
    if (addresses.length > 0) for (const send of (await this.sends.find({ where: { companyId, to: { in: addresses }, at: { gte: since } } })).items) add(send.to, send.at);
    return {
      today: (text: RuledText) => (sentAt.get(text.to) ?? []).filter((at) => at >= startOf(text)).length,
      add: (text: RuledText) => add(text.to, now),
    };
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

  /** The texts' messages, in order: the texts in one write, the emails in another. */
  async #toOutbox(texts: readonly RuledText[]): Promise<OutboxMessage[]> {
    const isEmail = (text: RuledText) => text.channel === "EMAIL";
    const sms = await this.outbox.sendMany(
      texts.filter((text) => !isEmail(text)).map((text) => ({
        companyId: text.companyId,
        to: text.to,
        body: text.body,
        ...(text.mediaUrl !== undefined ? { mediaUrl: text.mediaUrl } : {}),
        kind: text.kind,
        idempotencyKey: text.idempotencyKey,
        ...(text.tags ? { tags: text.tags } : {}),
      })),
    );
    const emails = await this.outbox.sendEmailMany(
      texts.filter(isEmail).map(({ companyId, to, body, subject, kind, idempotencyKey, tags }) => ({ companyId, to, subject: subject ?? "", text: body, kind, idempotencyKey, ...(tags ? { tags } : {}) })),
    );
    let nextSms = 0;
    let nextEmail = 0;
    return texts.map((text) => (isEmail(text) ? emails[nextEmail++]! : sms[nextSms++]!));
  }
}
