import { ACCOUNTS, definePlugin } from "../../src/index.ts";
import { SUBSCRIPTIONS_SERVICE } from "../subscriptions/index.ts";
import { legacyCommands } from "./commands.ts";
import { LegacyService } from "./legacy-service.ts";
import { LegacySubscribers } from "./legacy-subscribers.ts";
import { MessagePrefixes } from "./message-prefixes.ts";
import { legacyCollections } from "./records.ts";
import { legacyRoutes } from "./routes.ts";
import { LEGACY_SERVICE, LEGACY_SETTINGS, LEGACY_SUBSCRIBERS, MESSAGE_PREFIXES_SERVICE, TRANSACTIONAL_MESSAGES } from "./tokens.ts";
import { MESSAGE_REGIONS, TransactionalMessages } from "./transactional-messages.ts";

declare module "../../src/kernel/plugin.ts" {
  interface PluginApis {
    legacy: LegacyService;
  }
}

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
    register({ container }) {
      container.bind(LEGACY_SETTINGS, { useValue: { messageRegions } });
      container.bind(MESSAGE_PREFIXES_SERVICE, { useClass: MessagePrefixes });
      container.bind(LEGACY_SUBSCRIBERS, { useClass: LegacySubscribers });
      container.bind(TRANSACTIONAL_MESSAGES, { useClass: TransactionalMessages });
      container.bind(LEGACY_SERVICE, { useClass: LegacyService });
    },
    routes: ({ resolve }) => legacyRoutes(resolve(LEGACY_SERVICE)),
    api: ({ resolve }): LegacyService => resolve(LEGACY_SERVICE),
    deleteSubjectData: ({ resolve }, subject) => resolve(LEGACY_SERVICE).deleteSubjectData(subject),
  });
}
