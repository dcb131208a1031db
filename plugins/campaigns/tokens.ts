import { defineToken } from "../../src/index.ts";
import type { CampaignResults } from "./campaign-results.ts";
import type { CampaignSender } from "./campaign-sender.ts";
import type { Campaigns } from "./campaigns.ts";
import type { CampaignsService } from "./campaigns-service.ts";
import type { SegmentAudience } from "./segment-audience.ts";
import type { Segments } from "./segments.ts";
import type { ShortLinks } from "./short-links.ts";

const PROVIDER = "reachkit/plugins/campaigns (campaignsPlugin)";

/** The plugin's settings, defaults applied. */
export interface CampaignsSettings {
  /** How many recipients one send job hands to the outbox, in one transaction. */
  sendPageSize: number;
}

export const CAMPAIGNS_SETTINGS = defineToken<CampaignsSettings>("CampaignsSettings", [PROVIDER]);
export const SEGMENT_AUDIENCE = defineToken<SegmentAudience>("SegmentAudience", [PROVIDER]);
export const SEGMENTS_STORE = defineToken<Segments>("Segments", [PROVIDER]);
export const CAMPAIGNS_STORE = defineToken<Campaigns>("Campaigns", [PROVIDER]);
/** Tracked short links: other plugins shorten the URLs of their messages through it. */
export const SHORT_LINKS_SERVICE = defineToken<ShortLinks>("ShortLinks", [PROVIDER]);
export const CAMPAIGN_SENDER = defineToken<CampaignSender>("CampaignSender", [PROVIDER]);
export const CAMPAIGN_RESULTS = defineToken<CampaignResults>("CampaignResults", [PROVIDER]);
/** The campaigns service, for host apps (`kit.plugin("campaigns")`). */
export const CAMPAIGNS_SERVICE = defineToken<CampaignsService>("CampaignsService", [PROVIDER]);
