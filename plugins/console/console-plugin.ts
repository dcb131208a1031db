import { definePlugin, type ContainerFacade, type Token } from "../../src/index.ts";
import { ACCOUNTS_SERVICE } from "../accounts/index.ts";
import { APPOINTMENTS_SERVICE } from "../appointments/index.ts";
import { CAMPAIGNS_SERVICE } from "../campaigns/index.ts";
import { CATALOG_API } from "../catalog/index.ts";
import { JOURNEYS_SERVICE } from "../journeys/index.ts";
import { LEGACY_SERVICE } from "../legacy/index.ts";
import { OAUTH_API, SIGN_INS } from "../oauth/index.ts";
import { PRIVACY_REQUESTS_SERVICE } from "../privacy/index.ts";
import { PROFILES_SERVICE } from "../profiles/index.ts";
import { SEND_POLICIES } from "../send-rules/index.ts";
import { SUBSCRIPTIONS_SERVICE } from "../subscriptions/index.ts";
import { WEBHOOK_DELIVERIES, WEBHOOK_REGISTRY, WEBHOOK_SIGNING_KEYS } from "../webhooks/index.ts";
import { assetRoutes } from "./assets.ts";
import { campaignRoutes } from "./campaigns.ts";
import { catalogRoutes } from "./catalog.ts";
import type { ConsoleDeps } from "./console-routes.ts";
import { journeyRoutes } from "./journeys.ts";
import type { SectionId } from "./layout.ts";
import { messageRoutes } from "./messages.ts";
import { overviewRoutes } from "./overview.ts";
import { privacyRoutes } from "./privacy.ts";
import { productRoutes } from "./products.ts";
import { reminderRoutes } from "./reminders.ts";
import { settingsRoutes } from "./settings.ts";
import { signInRoutes } from "./sign-in.ts";
import { subscriberRoutes } from "./subscribers.ts";
import { webhookRoutes } from "./webhooks.ts";

export const CONSOLE_PATH = "/console";

/** A service of another plugin when the kit has it: pages of plugins the kit lacks are left out. */
const optional = <T>(container: ContainerFacade, token: Token<T>): T | undefined => (container.has(token) ? container.resolve(token) : undefined);

/**
 * The operator console at `/console` on the ui host: server-rendered pages for
 * the company's dashboard users (owners change things, viewers read), signed in
 * with the OAuth plugin's users, sessions and throttle. Pages of the catalog,
 * appointments, privacy, legacy, profiles, journeys, campaigns, send-rules and
 * webhooks plugins appear when the kit has them.
 */
export function consolePlugin() {
  return definePlugin({
    name: "console",
    requires: [ACCOUNTS_SERVICE, OAUTH_API, SIGN_INS, SUBSCRIPTIONS_SERVICE],
    routes({ container, resolve, secret, publicUrl, clock, outbox }) {
      const catalog = optional(container, CATALOG_API);
      const appointments = optional(container, APPOINTMENTS_SERVICE);
      const privacy = optional(container, PRIVACY_REQUESTS_SERVICE);
      const legacy = optional(container, LEGACY_SERVICE);
      const profiles = optional(container, PROFILES_SERVICE);
      const journeys = optional(container, JOURNEYS_SERVICE);
      const sendPolicies = optional(container, SEND_POLICIES);
      const campaigns = optional(container, CAMPAIGNS_SERVICE);
      const webhookRegistry = optional(container, WEBHOOK_REGISTRY);
      const sections: SectionId[] = ["overview", "subscribers", "messages"];
      if (journeys) sections.push("journeys");
      if (campaigns) sections.push("campaigns");
      if (catalog) sections.push("catalog", "products");
      if (appointments) sections.push("reminders");
      if (privacy) sections.push("privacy");
      if (webhookRegistry) sections.push("webhooks");
      sections.push("settings");
      const accounts = resolve(ACCOUNTS_SERVICE);
      const url = new URL(publicUrl("ui", CONSOLE_PATH));
      const deps: ConsoleDeps = {
        signIns: resolve(SIGN_INS),
        accounts,
        secret,
        // Links and redirects are paths of the origin the page was opened on (the public URL's may be another).
        base: url.pathname,
        secure: url.protocol === "https:",
        sections,
      };
      const subscriptions = resolve(SUBSCRIPTIONS_SERVICE);
      return [
        ...assetRoutes(),
        ...signInRoutes(deps),
        ...overviewRoutes(deps, { subscriptions, outbox, clock, catalog }),
        ...subscriberRoutes(deps, { subscriptions, outbox, appointments, profiles, journeys }),
        ...messageRoutes(deps, outbox),
        ...(journeys ? journeyRoutes(deps, journeys) : []),
        ...(campaigns ? campaignRoutes(deps, campaigns) : []),
        ...(catalog ? [...catalogRoutes(deps, catalog), ...productRoutes(deps, catalog)] : []),
        ...(appointments ? reminderRoutes(deps, appointments) : []),
        ...(privacy ? privacyRoutes(deps, privacy) : []),
        ...(webhookRegistry
          ? webhookRoutes(deps, { registry: webhookRegistry, deliveries: resolve(WEBHOOK_DELIVERIES), signingKeys: resolve(WEBHOOK_SIGNING_KEYS), accounts })
          : []),
        ...settingsRoutes(deps, { accounts, subscriptions, oauth: resolve(OAUTH_API), legacy, sendPolicies }),
      ];
    },
  });
}
