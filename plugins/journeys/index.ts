export { journeysPlugin } from "./journeys-plugin.ts";
export { JOURNEYS_SERVICE, JOURNEY_DEFINITIONS, JOURNEY_ENGINE, BACK_IN_STOCK } from "./tokens.ts";
export { JourneysService } from "./journeys-service.ts";
export { JOURNEY_TEMPLATES, TEMPLATE_NAMES } from "./templates.ts";
export {
  TRIGGERS,
  PRODUCT_TRIGGERS,
  PERSON_MACROS,
  PRODUCT_MACROS,
  MAX_STEPS,
  MAX_TEXT_LENGTH,
  DEFAULT_PACING,
  DEFAULT_WINDOW,
  type JourneyDefinition,
  type JourneyStep,
  type TriggerType,
} from "./definition.ts";
export { MAX_JOURNEYS_PER_COMPANY, DEFINITIONS_CACHE_MS, type CreateJourneyRequest, type UpdateJourneyRequest, type JourneyView } from "./journey-definitions.ts";
export { BACK_IN_STOCK_REQUEST, WAVE_PAGE, type RequestOutcome } from "./back-in-stock.ts";
export { ATTRIBUTION_MS } from "./journey-triggers.ts";
export { SKIP_REASONS, EXIT_REASONS, type JourneyStats } from "./journey-log.ts";
export type { JourneyRecord, JourneyStatus, EnrollmentRecord, EnrollmentState, Subject } from "./records.ts";
