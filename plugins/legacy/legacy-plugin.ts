import { ACCOUNTS, definePlugin, defineToken } from "../../src/index.ts";
import { SUBSCRIPTIONS_SERVICE } from "../subscriptions/index.ts";
import { legacyCommands } from "./commands.ts";
import { LegacyService } from "./legacy-service.ts";
import { legacyCollections } from "./records.ts";
import { legacyRoutes } from "./routes.ts";
import { MESSAGE_REGIONS } from "./transactional-messages.ts";

declare module "../../src/kernel/plugin.ts" {
  interface PluginApis {
    legacy: LegacyService;
  }
}

export const LEGACY_SERVICE = defineToken<LegacyService>("LegacyService", ["reachkit/plugins/legacy (legacyPlugin)"]);

export interface LegacyPluginOptions {
  /**
   * ISO 3166 regions whose numbers receive transactional messages, as
   * libphonenumber-js detects them from the number. Default `MESSAGE_REGIONS`.
   */
  messageRegions?: readonly string[];
}

/**
 * The legacy-token endpoints on the subscriptions service: `POST /1/add-subscribers`,
 * `POST /1/subscribers/unsubscribe`, `POST /1/messages`, and the archived
 * `POST /v1/messages` on the messages host.
 */
export function legacyPlugin(options: LegacyPluginOptions = {}) {
  const messageRegions = [...(options.messageRegions ?? MESSAGE_REGIONS)];
  return definePlugin({
    name: "legacy",
    requires: [ACCOUNTS, SUBSCRIPTIONS_SERVICE],
    collections: legacyCollections,
    commands: legacyCommands,
    register({ container, storage, clock, outbox }) {
      container.bind(LEGACY_SERVICE, {
        useFactory: (c) =>
          new LegacyService({
            storage,
            clock,
            outbox,
            subscriptions: c.resolve(SUBSCRIPTIONS_SERVICE),
            accounts: () => c.resolve(ACCOUNTS),
            messageRegions,
          }),
      });
    },
    routes: ({ resolve }) => legacyRoutes(resolve(LEGACY_SERVICE)),
    api: ({ resolve }): LegacyService => resolve(LEGACY_SERVICE),
    deleteSubjectData: ({ resolve }, subject) => resolve(LEGACY_SERVICE).deleteSubjectData(subject),
  });
}
