export { profilesPlugin, DEFAULT_EVENT_BODY_LIMIT_BYTES, type ProfilesPluginOptions } from "./profiles-plugin.ts";
export { PROFILES_SERVICE, PROFILES_SETTINGS, IDENTITY_GRAPH, EVENT_TIMELINE, PROFILE_ATTRIBUTES, PROFILE_PAGES, EVENT_PROPERTY_KEYS, type ProfilesSettings } from "./tokens.ts";
export {
  ProfilesService,
  type ProfileView,
  type PersonView,
  type ProfileIdentifier,
  type CustomEventRequest,
  type EcommerceEventRequest,
  type PurchaseEventRequest,
  type AttributesRequest,
  type IdentifyRequest,
} from "./profiles-service.ts";
export { EventTimeline, LATE_EVENT_MS, MAX_CLOCK_AHEAD_MS, MAX_PAGE_SIZE, timelineCursor, type RecordedEvent, type RecordOptions, type TimelinePage, type ProfileEventRecorded, type ProfileErased } from "./event-timeline.ts";
export { ProfileAttributes, type ProfileAttribute, type ProfileAttributesSet } from "./profile-attributes.ts";
export { IdentityGraph, type LinkOptions } from "./identity-graph.ts";
export { ProfilePages, MAX_PEOPLE_PAGE, type PagedPerson } from "./profile-pages.ts";
export { EventPropertyKeys } from "./event-property-keys.ts";
export {
  IDENTIFIER_KINDS,
  EVENT_KINDS,
  ATTRIBUTE_TYPES,
  type Identifier,
  type IdentifierKind,
  type EventKind,
  type EventRecord,
  type ProductItem,
  type ProductPrice,
  type AttributeType,
  type AttributeValue,
  type ProfileRecord,
  type IdentifierRecord,
} from "./records.ts";
export {
  profileSchemas,
  type ExternalIdentifierFields,
  parseTimestamp,
  SALES_CHANNELS,
  MAX_NAME_LENGTH,
  MAX_PROPERTY_KEYS,
  MAX_ATTRIBUTES_PER_REQUEST,
  MAX_ATTRIBUTE_VALUE_LENGTH,
  MAX_ITEMS,
} from "./schemas.ts";
