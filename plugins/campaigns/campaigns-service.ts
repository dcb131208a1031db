import { DateTime } from "luxon";
import { ACCOUNTS, CONFIG, conflict, inject, injectable, type Accounts, type DataSubject, type Page, type ReachkitConfig } from "../../src/index.ts";
import { PROFILES_SERVICE, type ProfilesService } from "../profiles/index.ts";
import { quietHoursOverlap, SEND_RULES, type SendRules } from "../send-rules/index.ts";
import type { CampaignResults, CampaignResultsView } from "./campaign-results.ts";
import { CampaignStateError, type CampaignSender } from "./campaign-sender.ts";
import type { Campaigns, CreateCampaignRequest, SendCampaignRequest, UpdateCampaignRequest } from "./campaigns.ts";
import type { CampaignRecord, SegmentRecord } from "./records.ts";
import type { SegmentAudience } from "./segment-audience.ts";
import type { CreateSegmentRequest, SegmentPreview, Segments, UpdateSegmentRequest } from "./segments.ts";
import type { ShortLinks } from "./short-links.ts";
import { CAMPAIGN_RESULTS, CAMPAIGN_SENDER, CAMPAIGNS_STORE, SEGMENT_AUDIENCE, SEGMENTS_STORE, SHORT_LINKS_SERVICE } from "./tokens.ts";

/** How long a campaign will take at its sender's rate, and whether that runs into quiet hours. */
export interface CampaignEstimate {
  audience: number;
  /** Texts a second of the company's sender number; null for email (not paced). */
  messagesPerSecond: number | null;
  seconds: number;
  startsAt: string;
  endsAt: string;
  warnings: string[];
}

/**
 * Segments and campaigns in process (`kit.plugin("campaigns")`): what
 * `/v1/segments`, `/v1/campaigns` and `reachkit segments|campaigns` do. Every
 * method is scoped by the company id it is given; another company's segment
 * or campaign is not found.
 */
@injectable()
export class CampaignsService {
  constructor(
    @inject(ACCOUNTS) private readonly accounts: Accounts,
    @inject(CONFIG) private readonly config: ReachkitConfig,
    @inject(PROFILES_SERVICE) private readonly profiles: ProfilesService,
    @inject(SEND_RULES) private readonly sendRules: SendRules,
    @inject(SEGMENTS_STORE) private readonly segments: Segments,
    @inject(SEGMENT_AUDIENCE) private readonly audience: SegmentAudience,
    @inject(CAMPAIGNS_STORE) private readonly campaigns: Campaigns,
    @inject(CAMPAIGN_SENDER) private readonly sender: CampaignSender,
    @inject(CAMPAIGN_RESULTS) private readonly results: CampaignResults,
    @inject(SHORT_LINKS_SERVICE) readonly links: ShortLinks,
  ) {}

  createSegment(companyId: string, request: CreateSegmentRequest): Promise<SegmentRecord> {
    return this.segments.create(companyId, request);
  }

  updateSegment(companyId: string, id: string, request: UpdateSegmentRequest): Promise<SegmentRecord | undefined> {
    return this.segments.update(companyId, id, request);
  }

  getSegment(companyId: string, id: string): Promise<SegmentRecord | undefined> {
    return this.segments.get(companyId, id);
  }

  listSegments(companyId: string): Promise<SegmentRecord[]> {
    return this.segments.list(companyId);
  }

  deleteSegment(companyId: string, id: string): Promise<boolean> {
    return this.segments.delete(companyId, id);
  }

  previewSegment(companyId: string, id: string): Promise<SegmentPreview | undefined> {
    return this.segments.preview(companyId, id);
  }

  create(companyId: string, request: CreateCampaignRequest): Promise<CampaignRecord> {
    return this.campaigns.create(companyId, request, this.#segmentExists(companyId));
  }

  update(companyId: string, id: string, request: UpdateCampaignRequest): Promise<CampaignRecord | undefined> {
    return this.campaigns.update(companyId, id, request, this.#segmentExists(companyId));
  }

  get(companyId: string, id: string): Promise<CampaignRecord | undefined> {
    return this.campaigns.get(companyId, id);
  }

  list(companyId: string): Promise<CampaignRecord[]> {
    return this.campaigns.list(companyId);
  }

  /** A page of the company's campaigns, newest first (the console's list). */
  page(companyId: string, options: { limit: number; after?: string }): Promise<Page<CampaignRecord>> {
    return this.campaigns.page(companyId, options);
  }

  delete(companyId: string, id: string): Promise<boolean> {
    return this.campaigns.delete(companyId, id);
  }

  /** Sends a draft now, at `sendAt`, or at `sendAtLocal` in each person's zone (400 naming the field, 409 unless a draft). */
  async send(companyId: string, id: string, request: SendCampaignRequest = {}): Promise<CampaignRecord | undefined> {
    const time = this.campaigns.sendTime(request);
    const campaign = await this.campaigns.get(companyId, id);
    if (!campaign) return undefined;
    return stateConflicts(() => this.sender.schedule(campaign, time));
  }

  /** Cancels a draft, scheduled or sending campaign (409 once sent): nothing not yet sent goes. */
  async cancel(companyId: string, id: string): Promise<CampaignRecord | undefined> {
    const campaign = await this.campaigns.get(companyId, id);
    if (!campaign) return undefined;
    return stateConflicts(() => this.sender.cancel(campaign));
  }

  async campaignResults(companyId: string, id: string): Promise<CampaignResultsView | undefined> {
    const campaign = await this.campaigns.get(companyId, id);
    return campaign && this.results.results(campaign);
  }

  /** The audience now, how long sending it takes at the sender's rate, and a warning when that runs into quiet hours. */
  async estimate(companyId: string, id: string, request: SendCampaignRequest = {}): Promise<CampaignEstimate | undefined> {
    const campaign = await this.campaigns.get(companyId, id);
    if (!campaign) return undefined;
    const segment = await this.segments.get(companyId, campaign.segmentId);
    const audience = segment ? (await this.audience.preview(companyId, segment.rule, 0)).size : 0;
    const messaging = this.config.messaging;
    const sender = (await this.accounts.getCompany(companyId))?.senderNumber ?? messaging.defaultSender;
    const rate = campaign.channel === "email" ? null : (messaging.ratePerSecondBySender[sender] ?? messaging.ratePerSecond);
    const seconds = rate === null || !Number.isFinite(rate) ? 0 : Math.ceil(audience / rate);
    const time = campaign.sendAt !== undefined ? { sendAt: campaign.sendAt } : campaign.sendAtLocal !== undefined ? { sendAtLocal: campaign.sendAtLocal } : this.campaigns.sendTime(request);
    const policy = await this.sendRules.policies.get(companyId);
    const start = "sendAt" in time ? time.sendAt : localStart(time.sendAtLocal, policy.timeZone);
    const end = start + seconds * 1000;
    const warnings: string[] = [];
    const overlap = policy.quietHours ? quietHoursOverlap(start, end, policy.timeZone, policy.quietHours) : undefined;
    if (overlap !== undefined) {
      warnings.push(
        `the send runs into quiet hours (${policy.quietHours!.start} to ${policy.quietHours!.end}, ${policy.timeZone}) at ${new Date(overlap).toISOString()}: texts due then wait until they end, and people in other zones wait for theirs`,
      );
    }
    return { audience, messagesPerSecond: rate === null || !Number.isFinite(rate) ? null : rate, seconds, startsAt: new Date(start).toISOString(), endsAt: new Date(end).toISOString(), warnings };
  }

  /** Removes a subject from every campaign (privacy deletion): recipients, links, clicks, attributed purchases. */
  async deleteSubjectData(subject: DataSubject): Promise<number> {
    const profileIds = await this.profiles.subjectProfiles(subject);
    if (profileIds.length === 0) return 0;
    return (await this.results.forget(subject.companyId, profileIds)) + (await this.links.forget(subject.companyId, profileIds));
  }

  #segmentExists(companyId: string) {
    return async (segmentId: string) => (await this.segments.get(companyId, segmentId)) !== undefined;
  }
}

async function stateConflicts<T>(act: () => Promise<T>): Promise<T> {
  try {
    return await act();
  } catch (error) {
    if (error instanceof CampaignStateError) throw conflict(`the campaign is ${error.status}: only a draft is sent, and a sent campaign is not cancelled`);
    throw error;
  }
}

/** A local-time send as the company's zone reads it (people elsewhere get it at the same hour of theirs). */
const localStart = (sendAtLocal: string, zone: string) => DateTime.fromISO(sendAtLocal, { zone }).toMillis();
