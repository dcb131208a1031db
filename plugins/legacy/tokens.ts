import { defineToken } from "../../src/index.ts";
import type { LegacyPluginOptions } from "./legacy-plugin.ts";
import type { LegacyService } from "./legacy-service.ts";
import type { LegacySubscribers } from "./legacy-subscribers.ts";
import type { MessagePrefixes } from "./message-prefixes.ts";
import type { TransactionalMessages } from "./transactional-messages.ts";

const PROVIDER = "reachkit/plugins/legacy (legacyPlugin)";
export const LEGACY_SERVICE = defineToken<LegacyService>("LegacyService", [PROVIDER]);

/** The plugin's options, defaults applied. */
export const LEGACY_SETTINGS = defineToken<Required<LegacyPluginOptions>>("LegacySettings", [PROVIDER]);
export const MESSAGE_PREFIXES_SERVICE = defineToken<MessagePrefixes>("MessagePrefixes", [PROVIDER]);
export const LEGACY_SUBSCRIBERS = defineToken<LegacySubscribers>("LegacySubscribers", [PROVIDER]);
export const TRANSACTIONAL_MESSAGES = defineToken<TransactionalMessages>("TransactionalMessages", [PROVIDER]);
