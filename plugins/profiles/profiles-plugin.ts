import { ACCOUNTS, definePlugin } from "../../src/index.ts";
import { profilesCommands } from "./commands.ts";
import { EventPropertyKeys } from "./event-property-keys.ts";
import { EventTimeline } from "./event-timeline.ts";
import { IdentityGraph } from "./identity-graph.ts";
import { ProfileAttributes } from "./profile-attributes.ts";
import { ProfilePages } from "./profile-pages.ts";
import { ProfilesService } from "./profiles-service.ts";
import { profileCollections } from "./records.ts";
import { profileRoutes } from "./routes.ts";
import { EVENT_PROPERTY_KEYS, EVENT_TIMELINE, IDENTITY_GRAPH, PROFILE_ATTRIBUTES, PROFILE_PAGES, PROFILES_SERVICE, PROFILES_SETTINGS, type ProfilesSettings } from "./tokens.ts";

// Augments the module that declares the interface, not src/index.ts that re-exports it: with an
// augmentation through the re-export, TypeScript 5.9 lost the augmentations of plugins it read later.
declare module "../../src/kernel/plugin.ts" {
  interface PluginApis {
    profiles: ProfilesService;
  }
}

/** The default cap of an event, attributes or identity body: far above any real event, far below the kit's 1 MiB. */
export const DEFAULT_EVENT_BODY_LIMIT_BYTES = 64 * 1024;

export interface ProfilesPluginOptions {
  /** The largest body of an event, attributes or identity request (default 64 KiB; 413 above). */
  eventBodyLimitBytes?: number;
}

/**
 * One profile per person per company: identifiers linked by identity calls
 * and by any request carrying two of them, typed custom attributes, and the
 * timeline of custom and ecommerce events. `POST /v1/events/custom`, `POST
 * /v1/events/ecommerce/{product-view,add-to-cart,purchase}`, `POST|GET
 * /v1/attributes/custom`, `POST /v1/identity-resolution/user-identifiers`.
 */
export function profilesPlugin(options: ProfilesPluginOptions = {}) {
  const settings: ProfilesSettings = { eventBodyLimitBytes: options.eventBodyLimitBytes ?? DEFAULT_EVENT_BODY_LIMIT_BYTES };
  if (!Number.isSafeInteger(settings.eventBodyLimitBytes) || settings.eventBodyLimitBytes < 1024) {
    throw new RangeError(`eventBodyLimitBytes must be a whole number of bytes, at least 1024; got ${settings.eventBodyLimitBytes}`);
  }
  return definePlugin({
    name: "profiles",
    requires: [ACCOUNTS],
    collections: profileCollections,
    commands: profilesCommands,
    register({ container }) {
      container.bind(PROFILES_SETTINGS, { useValue: settings });
      container.bind(IDENTITY_GRAPH, { useClass: IdentityGraph });
      container.bind(EVENT_PROPERTY_KEYS, { useClass: EventPropertyKeys });
      container.bind(EVENT_TIMELINE, { useClass: EventTimeline });
      container.bind(PROFILE_ATTRIBUTES, { useClass: ProfileAttributes });
      container.bind(PROFILE_PAGES, { useClass: ProfilePages });
      container.bind(PROFILES_SERVICE, { useClass: ProfilesService });
    },
    routes: ({ resolve }) => profileRoutes(resolve(PROFILES_SERVICE), resolve(PROFILES_SETTINGS)),
    api: ({ resolve }) => resolve(PROFILES_SERVICE),
    deleteSubjectData: ({ resolve }, subject) => resolve(PROFILES_SERVICE).deleteSubjectData(subject),
  });
}
