export { legacyPlugin, type LegacyPluginOptions } from "./legacy-plugin.ts";
export { LEGACY_SERVICE } from "./tokens.ts";
export { LegacyService } from "./legacy-service.ts";
export { LEGACY_SOURCE, type AddedSubscriber, type RemovedSubscriber, type LegacySubscriberView } from "./legacy-subscribers.ts";
export { MESSAGE_REGIONS, TRANSACTIONAL_KIND } from "./transactional-messages.ts";
export { MessagePrefixes, DEFAULT_MESSAGE_PREFIX, MAX_MESSAGE_PREFIX_LENGTH, renderPrefix, type PrefixValues } from "./message-prefixes.ts";
export {
  MAX_MESSAGE_LENGTH,
  MAX_METADATA_LENGTH,
  type AddSubscriberRequest,
  type RemoveSubscriberRequest,
  type TransactionalMessageRequest,
  type ArchivedMessageRequest,
  type AddSubscriberInput,
  type RemoveSubscriberInput,
  type MessageInput,
} from "./schemas.ts";
export type { LegacySignUp, MessagePrefixRecord } from "./records.ts";
