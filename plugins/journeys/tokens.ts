import { defineToken } from "../../src/index.ts";
import type { BackInStock } from "./back-in-stock.ts";
import type { CatalogAudiences } from "./catalog-audiences.ts";
import type { JourneyDefinitions } from "./journey-definitions.ts";
import type { JourneyEngine } from "./journey-engine.ts";
import type { JourneyLog } from "./journey-log.ts";
import type { JourneysService } from "./journeys-service.ts";
import type { JourneyTriggers } from "./journey-triggers.ts";

const PROVIDER = "reachkit/plugins/journeys (journeysPlugin)";
export const JOURNEY_DEFINITIONS = defineToken<JourneyDefinitions>("JourneyDefinitions", [PROVIDER]);
export const JOURNEY_LOG_SERVICE = defineToken<JourneyLog>("JourneyLog", [PROVIDER]);
export const JOURNEY_ENGINE = defineToken<JourneyEngine>("JourneyEngine", [PROVIDER]);
export const BACK_IN_STOCK = defineToken<BackInStock>("BackInStock", [PROVIDER]);
export const CATALOG_AUDIENCES = defineToken<CatalogAudiences>("CatalogAudiences", [PROVIDER]);
export const JOURNEY_TRIGGERS = defineToken<JourneyTriggers>("JourneyTriggers", [PROVIDER]);
/** The journeys service, for host apps (`kit.plugin("journeys")`) and other plugins. */
export const JOURNEYS_SERVICE = defineToken<JourneysService>("JourneysService", [PROVIDER]);
