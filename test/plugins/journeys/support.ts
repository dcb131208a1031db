import { fakeClock } from "../../../adapters/clock/index.ts";
import { catalogPlugin } from "../../../plugins/catalog/index.ts";
import { journeysPlugin } from "../../../plugins/journeys/index.ts";
import { profilesPlugin } from "../../../plugins/profiles/index.ts";
import { sendRulesPlugin, type SendRulesPluginOptions } from "../../../plugins/send-rules/index.ts";
import type { Storage } from "../../../src/index.ts";
import { pathOf, product, variant, ndjson } from "../catalog/support.ts";
import { defaultPlugins, startTestKit, type Json, type TestKit } from "../../support/test-kit.ts";

export { product, variant, ndjson };

/** Noon in New York on a Monday: outside the default quiet hours (20:00 to 11:00 local). */
export const NOON_NEW_YORK = "2026-03-02T17:00:00.000Z";

export interface JourneysTestKit extends TestKit {
  /** Opts a phone in to MARKETING texts, active at once, with a first name. */
  subscribe(phone: string, firstName?: string): Promise<void>;
  /** POST /v1/journeys; answers the journey. */
  createJourney(body: Json): Promise<Json>;
  /** Uploads a catalog file and runs its processing (and the journeys it starts). */
  uploadCatalog(lines: readonly Json[]): Promise<void>;
  /** POST an event route with a phone as the user. */
  event(path: string, phone: string, body: Json): Promise<void>;
  /** The bodies of the journey texts sent to a phone (the outbox, kind `journey`). */
  journeyTexts(phone: string): Promise<string[]>;
  stats(journeyId: string): Promise<Json>;
}

export async function startJourneysKit(options: { storage?: Storage; sendRules?: SendRulesPluginOptions; at?: string } = {}): Promise<JourneysTestKit> {
  const t = await startTestKit({
    plugins: [...defaultPlugins(), catalogPlugin(), profilesPlugin(), sendRulesPlugin(options.sendRules), journeysPlugin()],
    storage: options.storage,
    clock: fakeClock(options.at ?? NOON_NEW_YORK),
    config: { rateLimits: { "catalog-upload": Infinity } },
  });
  const kit: JourneysTestKit = {
    ...t,
    async subscribe(phone, firstName) {
      await t.kit.plugin("subscriptions").optInNow(t.company.companyId, {
        user: { phone, ...(firstName ? { firstName } : {}) },
        locale: { language: "en", country: "US" },
        subscriptionType: "MARKETING",
        singleOptIn: true,
      });
      await t.scheduler.flush();
    },
    async createJourney(body) {
      const response = await t.request({ method: "POST", url: "/v1/journeys", body });
      if (response.status !== 201) throw new Error(`POST /v1/journeys answered ${response.status}: ${response.body}`);
      return t.json(response);
    },
    async uploadCatalog(lines) {
      const created = await t.request({ method: "POST", url: "/v1/product-catalog/uploads", body: {} });
      const upload = t.json(created);
      const sent = await t.request({ method: "PUT", url: pathOf(upload.uploadUrl), body: ndjson(...lines), token: null });
      if (sent.status !== 200) throw new Error(`the catalog PUT answered ${sent.status}`);
      await t.scheduler.flush();
      const status = t.json(await t.request({ url: `/v1/product-catalog/uploads/${upload.uploadId}` })).status;
      if (status !== "completed") throw new Error(`the catalog upload ended ${status}`);
    },
    async event(path, phone, body) {
      const response = await t.request({ method: "POST", url: `/v1/events/${path}`, body: { user: { phone }, ...body } });
      if (response.status !== 200) throw new Error(`POST /v1/events/${path} answered ${response.status}: ${response.body}`);
      await t.scheduler.flush();
    },
    async journeyTexts(phone) {
      return (await t.kit.outbox.list({ companyId: t.company.companyId, to: phone })).filter((message) => message.kind === "journey").map((message) => message.body);
    },
    async stats(journeyId) {
      const response = await t.request({ url: `/v1/journeys/${journeyId}/stats` });
      if (response.status !== 200) throw new Error(`stats answered ${response.status}: ${response.body}`);
      return t.json(response);
    },
  };
  return kit;
}

/** A product view, add-to-cart or purchase body of one item. */
export const items = (productId: string, variantId: string, value = 20, extra: Json = {}) => ({
  items: [{ productId, productVariantId: variantId, name: `Product ${productId}`, productUrl: `https://shop.example.com/p/${productId}`, price: [{ value, currency: "USD" }], ...extra }],
});
