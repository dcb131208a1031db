import { setImmediate as nextTurn } from "node:timers/promises";
import { createHash } from "node:crypto";
import { DateTime } from "luxon";
import { ACCOUNTS, CLOCK, fillTemplate, inject, injectable, JOBS, STORAGE, type Accounts, type Clock, type Collection, type Jobs, type Storage } from "../../src/index.ts";
import type { PagedPerson } from "../profiles/index.ts";
import { SEND_RULES, type RuledText, type SendRules } from "../send-rules/index.ts";
import type { Campaigns, SendTime } from "./campaigns.ts";
import { CAMPAIGNS, RECIPIENTS, recipientId, type CampaignRecord, type CampaignVariant, type RecipientRecord } from "./records.ts";
import type { SegmentAudience } from "./segment-audience.ts";
import type { Segments } from "./segments.ts";
import { replaceUrls, urlsIn, type ShortLinks } from "./short-links.ts";
import { CAMPAIGNS_SETTINGS, CAMPAIGNS_STORE, SEGMENT_AUDIENCE, SEGMENTS_STORE, SHORT_LINKS_SERVICE, type CampaignsSettings } from "./tokens.ts";

export const AUDIENCE_JOB = "campaigns.audience";
export const SEND_JOB = "campaigns.send";
export interface CampaignJob {
  campaignId: string;
}
const audienceKey = (campaignId: string) => `campaigns:audience:${campaignId}`;
const sendKey = (campaignId: string) => `campaigns:send:${campaignId}`;

/** The zone furthest ahead (UTC+14): a local-time send's audience is read when that time comes there. */
const EARLIEST_ZONE = "Etc/GMT-14";

/**
 * Sends campaigns, durably and exactly once per person. At the send time an
 * audience job reads the segment a page of profiles at a time into
 * recipients (one per address, so a person matched twice, or two profiles
 * with one number, is one recipient), each page in one transaction with the
 * scan's cursor. Then send jobs hand due recipients to the shared send rules
 * a page at a time, each recipient's outbox message (idempotency key: the
 * campaign and address) committed with its move to `sent`. A kill -9 at any
 * point re-runs a page whose effects are either all there or none, so nobody
 * is lost and nobody is texted twice.
 */
@injectable()
export class CampaignSender {
  private readonly campaigns: Collection<CampaignRecord>;
  private readonly recipients: Collection<RecipientRecord>;

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(JOBS) private readonly jobs: Jobs,
    @inject(ACCOUNTS) private readonly accounts: Accounts,
    @inject(SEND_RULES) private readonly sendRules: SendRules,
    @inject(SEGMENT_AUDIENCE) private readonly audience: SegmentAudience,
    @inject(SEGMENTS_STORE) private readonly segments: Segments,
    @inject(CAMPAIGNS_STORE) private readonly definitions: Campaigns,
    @inject(SHORT_LINKS_SERVICE) private readonly links: ShortLinks,
    @inject(CAMPAIGNS_SETTINGS) private readonly settings: CampaignsSettings,
  ) {
    this.campaigns = storage.collection(CAMPAIGNS);
    this.recipients = storage.collection(RECIPIENTS);
  }

  /** Schedules a draft: its audience is read when the time comes (409 unless a draft). */
  async schedule(campaign: CampaignRecord, time: SendTime): Promise<CampaignRecord> {
    return this.storage.transaction(async () => {
      const current = await this.definitions.get(campaign.companyId, campaign.id);
      if (current?.status !== "draft") throw new CampaignStateError(current?.status ?? "deleted");
      const readAt = "sendAt" in time ? time.sendAt : DateTime.fromISO(time.sendAtLocal, { zone: EARLIEST_ZONE }).toMillis();
      // Fenced: a cancel or a delete that committed since the read wins (transactions run side by side on PostgreSQL).
      const scheduled = await this.campaigns.update(campaign.id, { status: "scheduled", ...time, updatedAt: this.clock.now() }, { where: { status: "draft" } });
      if (!scheduled) throw new CampaignStateError((await this.campaigns.get(campaign.id))?.status ?? "deleted");
      await this.jobs.enqueue({ type: AUDIENCE_JOB, payload: { campaignId: campaign.id }, key: audienceKey(campaign.id), runAt: Math.max(readAt, this.clock.now()), companyId: campaign.companyId });
      return scheduled;
    });
  }

  /** Cancels a scheduled or sending campaign: what was not sent yet is not sent. */
  async cancel(campaign: CampaignRecord): Promise<CampaignRecord> {
    return this.storage.transaction(async () => {
      const current = await this.definitions.get(campaign.companyId, campaign.id);
      if (!current) throw new CampaignStateError("deleted");
      const now = this.clock.now();
      // The campaign's row first, fenced: an audience or send job under way holds it (see #claim) and this waits
      // for its commit, then cancels what it left pending; one that starts later finds the campaign cancelled.
      const cancelled = await this.campaigns.update(campaign.id, { status: "cancelled", cancelledAt: now, updatedAt: now }, { where: { status: { in: ["scheduled", "sending", "draft"] } } });
      if (!cancelled) throw new CampaignStateError((await this.campaigns.get(campaign.id))?.status ?? "deleted");
      await this.jobs.cancel(audienceKey(campaign.id));
      await this.jobs.cancel(sendKey(campaign.id));
      await this.recipients.updateWhere({ campaignId: campaign.id, state: "pending" }, { state: "cancelled", reason: "campaign_cancelled" });
      return cancelled;
    });
  }

  /** The audience job: one page of profiles into recipients, then the next page's job (or the first send job). */
  async readAudience(job: CampaignJob): Promise<void> {
    await this.storage.transaction(async () => {
      const campaign = await this.#claim(job.campaignId, "scheduled");
      if (!campaign || campaign.audienceDone) return;
      const segment = await this.segments.get(campaign.companyId, campaign.segmentId);
      const page = segment
        ? await this.audience.page(campaign.companyId, segment.rule, campaign.audienceCursor !== undefined ? { after: campaign.audienceCursor } : {})
        : { matched: [], scanned: 0 };
      // The page's reads and its recipients' writes in turns of their own (see send).
      await nextTurn();
      await this.#addRecipients(campaign, page.matched);
      const now = this.clock.now();
      if (page.nextCursor !== undefined) {
        await this.campaigns.update(campaign.id, { audienceCursor: page.nextCursor, updatedAt: now });
        await this.jobs.enqueue({ type: AUDIENCE_JOB, payload: job, key: audienceKey(campaign.id), replace: true, companyId: campaign.companyId });
        return;
      }
      await this.campaigns.update(campaign.id, { audienceDone: true, status: "sending", startedAt: now, updatedAt: now });
      await this.#scheduleSend(campaign);
    });
  }

  /**
   * The send job: a page of due recipients through the send rules into the outbox, in one transaction. Between
   * its steps (the due read, the short links, the texts through the send rules, the recipients' moves: each some
   * milliseconds per hundred recipients) it gives the event loop back: setImmediate from the check phase, where
   * the job runner's and the group commits' callbacks run, resumes on the next turn, after that turn's I/O. Run as
   * one chain of promises, a page held the process (its requests, timers and sockets) for all of its steps.
   */
  async send(job: CampaignJob): Promise<void> {
    await this.storage.transaction(async () => {
      const campaign = await this.#claim(job.campaignId, "sending");
      if (!campaign) return;
      const due = await this.recipients.find({
        where: { campaignId: campaign.id, state: "pending", dueAt: { lte: this.clock.now() } },
        orderBy: [{ field: "dueAt" }],
        limit: this.settings.sendPageSize,
      });
      await nextTurn();
      const moves = await this.#sendPage(campaign, due.items);
      await nextTurn();
      // One statement for the page's moves rather than a read and a write each: nothing else writes these records in this transaction.
      // Moved in place, not copied: a page's records outlive the young generation, so a copy of each was old-generation garbage.
      due.items.forEach((recipient, i) => Object.assign(recipient, moves[i]));
      await this.recipients.upsertMany(due.items);
      await this.#scheduleSend(campaign);
    });
  }

  /**
   * The campaign, when it has `status`, held to the commit: a cancel waits for the job's page instead of
   * being overwritten by it.
   */
  async #claim(campaignId: string, status: "scheduled" | "sending"): Promise<CampaignRecord | undefined> {
    const campaign = await this.campaigns.getForUpdate(campaignId);
    return campaign?.status === status ? campaign : undefined;
  }

  /** The next send job, at the earliest pending recipient's time; the campaign is sent when none is left. */
  async #scheduleSend(campaign: CampaignRecord): Promise<void> {
    const next = await this.recipients.findOne({ campaignId: campaign.id, state: "pending" }, [{ field: "dueAt" }]);
    if (!next) {
      const now = this.clock.now();
      await this.campaigns.update(campaign.id, { status: "sent", finishedAt: now, updatedAt: now });
      return;
    }
    await this.jobs.enqueue({ type: SEND_JOB, payload: { campaignId: campaign.id }, key: sendKey(campaign.id), replace: true, runAt: Math.max(next.dueAt, this.clock.now()), companyId: campaign.companyId });
  }

  /** A page's people as recipients, one per address: those already in (an earlier page, another profile with the number) are left as they are. */
  async #addRecipients(campaign: CampaignRecord, people: readonly PagedPerson[]): Promise<void> {
    if (people.length === 0) return;
    const policy = await this.sendRules.policies.get(campaign.companyId);
    const now = this.clock.now();
    const addressOf = (person: PagedPerson) => (campaign.channel === "email" ? person.email : person.phone);
    const ids = people.map((person) => recipientId(campaign.id, addressOf(person) ?? `profile:${person.id}`));
    const taken = new Set((await this.recipients.find({ where: { id: { in: [...new Set(ids)] } } })).items.map((recipient) => recipient.id));
    const added: RecipientRecord[] = [];
    people.forEach((person, i) => {
      const id = ids[i]!;
      if (taken.has(id)) return;
      taken.add(id);
      const address = addressOf(person);
      const attributes = person.attributes;
      const dueAt =
        campaign.sendAtLocal !== undefined && address !== undefined
          ? Math.max(DateTime.fromISO(campaign.sendAtLocal, { zone: this.sendRules.zoneOf(policy, { to: address, attributes }) }).toMillis(), now)
          : (campaign.sendAt ?? now);
      const base = { id, companyId: campaign.companyId, campaignId: campaign.id, profileId: person.id, variant: variantOf(campaign.variants, campaign.id, person.id).name, dueAt, attributes };
      added.push(address === undefined ? { ...base, address: "", state: "skipped", reason: campaign.channel === "email" ? "no_email" : "no_phone" } : { ...base, address, state: "pending" });
    });
    await this.recipients.upsertMany(added);
  }

  /** Sends a page of recipients' messages, those the rules allow now, in one batch; answers each recipient's move. */
  async #sendPage(campaign: CampaignRecord, recipients: readonly RecipientRecord[]): Promise<Array<Partial<RecipientRecord>>> {
    const texts = await this.#messagesOf(campaign, recipients);
    const outcomes = await this.sendRules.sendMany(texts.filter((text) => text !== undefined));
    const now = this.clock.now();
    let next = 0;
    return texts.map((text): Partial<RecipientRecord> => {
      if (text === undefined) return { state: "skipped", reason: "missing_macro" };
      const outcome = outcomes[next++]!;
      if (outcome.status === "deferred") return { dueAt: outcome.until };
      if (outcome.status === "skipped") return { state: "skipped", reason: outcome.reason };
      return { state: "sent", messageId: outcome.message.id, sentAt: now };
    });
  }

  /**
   * Each recipient's message, filled for them (undefined when a macro has no value for them), their short links
   * made for the whole page in one batch.
   */
  async #messagesOf(campaign: CampaignRecord, recipients: readonly RecipientRecord[]): Promise<Array<RuledText | undefined>> {
    const companyName = (await this.accounts.getCompany(campaign.companyId))?.name;
    const channel = campaign.channel === "email" ? "email" : "sms";
    const variantOfRecipient = (recipient: RecipientRecord) => campaign.variants.find((candidate) => candidate.name === recipient.variant) ?? campaign.variants[0]!;
    const urlsOfVariant = new Map(campaign.variants.map((variant) => [variant, urlsIn(variant.text)]));
    const hasLink = (variant: CampaignVariant) => variant.text.includes("{link}") && campaign.link !== undefined;
    // Per recipient: the {link} (when its variant has one), then the URLs written in its text.
    const links = recipients.map((recipient) => {
      const variant = variantOfRecipient(recipient);
      const context = { source: "campaign", campaignId: campaign.id, variant: variant.name, recipientId: recipient.id, profileId: recipient.profileId, address: recipient.address, channel } as const;
      return [...(hasLink(variant) ? [campaign.link!] : []), ...urlsOfVariant.get(variant)!].map((url) => ({ url, context }));
    });
    const shortened = await this.links.shortenMany(campaign.companyId, links.flat());
    await nextTurn();
    let next = 0;
    return recipients.map((recipient, i) => {
      const variant = variantOfRecipient(recipient);
      const short = shortened.slice(next, (next += links[i]!.length));
      const values: Record<string, string | undefined> = {
        firstName: text(recipient.attributes.firstName),
        lastName: text(recipient.attributes.lastName),
        companyName,
        link: hasLink(variant) ? short[0] : undefined,
      };
      // The URLs written in the text are shortened before the macros are filled: the {link} filled in is short already.
      const filled = fillTemplate(replaceUrls(variant.text, urlsOfVariant.get(variant)!, hasLink(variant) ? short.slice(1) : short), values);
      const filledSubject = variant.subject === undefined ? undefined : fillTemplate(variant.subject, values);
      if (filled.missing || filledSubject?.missing) return undefined;
      return {
        companyId: campaign.companyId,
        channel: channel === "email" ? "EMAIL" : "TEXT",
        to: recipient.address,
        messageType: "MARKETING",
        body: filled.text,
        ...(filledSubject !== undefined ? { subject: filledSubject.text } : {}),
        ...(campaign.channel === "mms" && variant.mediaUrl !== undefined ? { mediaUrl: variant.mediaUrl } : {}),
        kind: "campaign",
        idempotencyKey: `campaign:${campaign.id}:${recipient.address}`,
        tags: { campaignId: campaign.id, variant: variant.name },
        attributes: recipient.attributes,
      } satisfies RuledText;
    });
  }
}

/** A campaign changed while it could not: scheduled twice, cancelled once sent. */
export class CampaignStateError extends Error {
  constructor(readonly status: string) {
    super(`the campaign is ${status}`);
  }
}

/**
 * A person's variant: a hash of the campaign and the profile over the
 * variants' weights, so the split holds its shares and a page read again
 * gives everyone the same variant.
 */
export function variantOf(variants: readonly CampaignVariant[], campaignId: string, profileId: string): CampaignVariant {
  if (variants.length === 1) return variants[0]!;
  const total = variants.reduce((sum, variant) => sum + variant.weight, 0);
  let point = createHash("sha256").update(`${campaignId}:${profileId}`).digest().readUInt32BE(0) % total;
  for (const variant of variants) {
    if (point < variant.weight) return variant;
    point -= variant.weight;
  }
  return variants.at(-1)!;
}

const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);
