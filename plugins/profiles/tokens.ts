import { defineToken } from "../../src/index.ts";
import type { EventPropertyKeys } from "./event-property-keys.ts";
import type { EventTimeline } from "./event-timeline.ts";
import type { IdentityGraph } from "./identity-graph.ts";
import type { ProfileAttributes } from "./profile-attributes.ts";
import type { ProfilePages } from "./profile-pages.ts";
import type { ProfilesService } from "./profiles-service.ts";

const PROVIDER = "reachkit/plugins/profiles (profilesPlugin)";

/** The plugin's settings, with their defaults applied. */
export interface ProfilesSettings {
  /** The largest body of an event or attributes request (413 above). */
  eventBodyLimitBytes: number;
}

export const PROFILES_SETTINGS = defineToken<ProfilesSettings>("ProfilesSettings", [PROVIDER]);
export const IDENTITY_GRAPH = defineToken<IdentityGraph>("IdentityGraph", [PROVIDER]);
export const EVENT_PROPERTY_KEYS = defineToken<EventPropertyKeys>("EventPropertyKeys", [PROVIDER]);
export const EVENT_TIMELINE = defineToken<EventTimeline>("EventTimeline", [PROVIDER]);
export const PROFILE_ATTRIBUTES = defineToken<ProfileAttributes>("ProfileAttributes", [PROVIDER]);
/** The profiles service, for host apps and other plugins (`requires: [PROFILES_SERVICE]`, then `resolve`). */
export const PROFILES_SERVICE = defineToken<ProfilesService>("ProfilesService", [PROVIDER]);
/** A company's live profiles read in pages with their identifiers, attributes and events (audiences: the campaigns plugin's segments). */
export const PROFILE_PAGES = defineToken<ProfilePages>("ProfilePages", [PROVIDER]);
