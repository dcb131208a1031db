import { fakeClock } from "../../../adapters/clock/index.ts";
import { campaignsPlugin } from "../../../plugins/campaigns/index.ts";
import { catalogPlugin } from "../../../plugins/catalog/index.ts";
import { journeysPlugin } from "../../../plugins/journeys/index.ts";
import { legacyPlugin } from "../../../plugins/legacy/index.ts";
import { profilesPlugin } from "../../../plugins/profiles/index.ts";
import { sendRulesPlugin, type SendRulesPluginOptions } from "../../../plugins/send-rules/index.ts";
import type { Storage } from "../../../src/index.ts";
import { defaultPlugins, startTestKit, type Json, type TestKit } from "../../support/test-kit.ts";

/** Noon in New York on a Monday: outside the default quiet hours (20:00 to 11:00 local). */
export const NOON_NEW_YORK = "2026-03-02T17:00:00.000Z";

export interface CampaignsTestKit extends TestKit {
  /** Opts a phone in to MARKETING texts (active at once) and sets profile attributes. */
  person(phone: string, attributes?: Record<string, string | number | boolean>): Promise<void>;
  /** POST a route, expecting `status`; answers the JSON body. */
  ok(method: string, url: string, body?: Json, status?: number): Promise<Json>;
  segment(rule: Json): Promise<string>;
  /** Creates a campaign to the segment and sends it now; runs its jobs. */
  campaign(body: Json): Promise<string>;
  /** The bodies of the campaign texts sent to a phone. */
  texts(phone: string): Promise<string[]>;
}

export async function startCampaignsKit(options: { storage?: Storage; sendRules?: SendRulesPluginOptions; at?: string; sendPageSize?: number } = {}): Promise<CampaignsTestKit> {
  const t = await startTestKit({
    plugins: [...defaultPlugins(), catalogPlugin(), profilesPlugin(), sendRulesPlugin(options.sendRules), journeysPlugin(), legacyPlugin(), campaignsPlugin({ ...(options.sendPageSize ? { sendPageSize: options.sendPageSize } : {}) })],
    storage: options.storage,
    clock: fakeClock(options.at ?? NOON_NEW_YORK),
    config: { rateLimits: { "catalog-upload": Infinity }, messaging: { ratePerSecond: Infinity } },
  });
  const ok = async (method: string, url: string, body?: Json, status = 200) => {
    const response = await t.request({ method, url, ...(body !== undefined ? { body } : {}) });
    if (response.status !== status) throw new Error(`${method} ${url} answered ${response.status}: ${response.body}`);
    return response.body ? t.json(response) : undefined;
  };
  const kit: CampaignsTestKit = {
    ...t,
    ok,
    async person(phone, attributes = {}) {
      await t.kit.plugin("subscriptions").optInNow(t.company.companyId, { user: { phone }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING", singleOptIn: true });
      await t.kit.plugin("profiles").link(t.company.companyId, [{ kind: "phone", value: phone }]);
      if (Object.keys(attributes).length > 0) await ok("POST", "/v1/attributes/custom", { user: { phone }, properties: attributes });
      await t.scheduler.flush();
    },
    async segment(rule) {
      return (await ok("POST", "/v1/segments", { name: "Audience", rule }, 201)).id;
    },
    async campaign(body) {
      const created = await ok("POST", "/v1/campaigns", { name: "Sale", channel: "sms", ...body }, 201);
      await ok("POST", `/v1/campaigns/${created.id}/send`, {});
      await t.scheduler.flush();
      return created.id;
    },
    async texts(phone) {
      return (await t.kit.outbox.list({ companyId: t.company.companyId, to: phone })).filter((message) => message.kind === "campaign").map((message) => message.body);
    },
  };
  return kit;
}
