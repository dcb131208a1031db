import { ACCOUNTS, definePlugin, EVENTS, LINK_SHORTENER } from "../../src/index.ts";
import { CATALOG_API } from "../catalog/index.ts";
import { PROFILE_PAGES, PROFILES_SERVICE } from "../profiles/index.ts";
import { SEND_RULES } from "../send-rules/index.ts";
import { SUBSCRIPTIONS_SERVICE } from "../subscriptions/index.ts";
import { CampaignResults } from "./campaign-results.ts";
import { AUDIENCE_JOB, CampaignSender, SEND_JOB, type CampaignJob } from "./campaign-sender.ts";
import { Campaigns } from "./campaigns.ts";
import { CampaignsService } from "./campaigns-service.ts";
import { campaignsCommands } from "./commands.ts";
import { campaignCollections } from "./records.ts";
import { campaignRoutes } from "./routes.ts";
import { SegmentAudience } from "./segment-audience.ts";
import { Segments } from "./segments.ts";
import { ShortLinks } from "./short-links.ts";
import { CAMPAIGN_RESULTS, CAMPAIGN_SENDER, CAMPAIGNS_SERVICE, CAMPAIGNS_SETTINGS, CAMPAIGNS_STORE, SEGMENT_AUDIENCE, SEGMENTS_STORE, SHORT_LINKS_SERVICE, type CampaignsSettings } from "./tokens.ts";

declare module "../../src/kernel/plugin.ts" {
  interface PluginApis {
    campaigns: CampaignsService;
  }
}

/** Recipients one send job hands to the outbox in one transaction. */
export const DEFAULT_SEND_PAGE_SIZE = 200;

export interface CampaignsPluginOptions {
  /** Default {@link DEFAULT_SEND_PAGE_SIZE}, 1 to 1000. */
  sendPageSize?: number;
}

/**
 * Segments, campaigns and tracked short links: one message to a chosen
 * audience at a chosen time, through the shared send rules, with results per
 * variant. `/v1/segments`, `/v1/campaigns`, `/l/<code>` on the short host,
 * and `reachkit segments|campaigns`. Needs the profiles, catalog,
 * subscriptions and sendRules plugins.
 */
export function campaignsPlugin(options: CampaignsPluginOptions = {}) {
  const sendPageSize = options.sendPageSize ?? DEFAULT_SEND_PAGE_SIZE;
  if (!Number.isSafeInteger(sendPageSize) || sendPageSize < 1 || sendPageSize > 1000) throw new RangeError("campaignsPlugin: sendPageSize must be a whole number from 1 to 1000");
  const settings: CampaignsSettings = { sendPageSize };
  const stopListening: Array<() => void> = [];
  return definePlugin({
    name: "campaigns",
    requires: [ACCOUNTS, PROFILES_SERVICE, PROFILE_PAGES, SUBSCRIPTIONS_SERVICE, CATALOG_API, SEND_RULES],
    collections: campaignCollections,
    commands: campaignsCommands,
    register({ container }) {
      container.bind(CAMPAIGNS_SETTINGS, { useValue: settings });
      container.bind(SEGMENT_AUDIENCE, { useClass: SegmentAudience });
      container.bind(SEGMENTS_STORE, { useClass: Segments });
      container.bind(CAMPAIGNS_STORE, { useClass: Campaigns });
      container.bind(SHORT_LINKS_SERVICE, { useClass: ShortLinks });
      // Journeys' and transactional messages' links become tracked short links too.
      container.bind(LINK_SHORTENER, { useFactory: (resolved) => resolved.resolve(SHORT_LINKS_SERVICE) }, { override: true });
      container.bind(CAMPAIGN_SENDER, { useClass: CampaignSender });
      container.bind(CAMPAIGN_RESULTS, { useClass: CampaignResults });
      container.bind(CAMPAIGNS_SERVICE, { useClass: CampaignsService });
    },
    routes: ({ resolve }) => campaignRoutes(resolve(CAMPAIGNS_SERVICE)),
    jobs: ({ resolve }) => {
      const sender = resolve(CAMPAIGN_SENDER);
      return {
        [AUDIENCE_JOB]: (payload: CampaignJob) => sender.readAudience(payload),
        [SEND_JOB]: (payload: CampaignJob) => sender.send(payload),
      };
    },
    api: ({ resolve }) => resolve(CAMPAIGNS_SERVICE),
    deleteSubjectData: ({ resolve }, subject) => resolve(CAMPAIGNS_SERVICE).deleteSubjectData(subject),
    async start({ resolve }) {
      const events = resolve(EVENTS);
      const results = resolve(CAMPAIGN_RESULTS);
      const service = resolve(CAMPAIGNS_SERVICE);
      stopListening.push(
        // In the change's transaction: the receipt, opt-out or purchase and its count commit together.
        events.onInTransaction("message.status_changed", (change) => results.onStatusChanged(change)),
        events.onInTransaction("subscription.unsubscribed", (event) => results.onUnsubscribed(event)),
        events.onInTransaction("profile.event.recorded", (event) => results.onEvent(event)),
        events.onInTransaction("profile.erased", async (event) => {
          await results.forget(event.companyId, event.profileIds);
          await service.links.forget(event.companyId, event.profileIds);
        }),
      );
    },
    async stop() {
      for (const stop of stopListening.splice(0)) stop();
    },
  });
}
