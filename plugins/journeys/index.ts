export { journeysPlugin } from "./journeys-plugin.ts";
export { JOURNEYS_SERVICE, JOURNEY_DEFINITIONS, JOURNEY_ENGINE, BACK_IN_STOCK } from "./tokens.ts";
export { JourneysService } from "./journeys-service.ts";
export { EXAMPLE_JOURNEY_ID } from "./openapi.ts";
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
export {
  JourneyDefinitions,
  createJourneySchema,
  updateJourneySchema,
  MAX_JOURNEYS_PER_COMPANY,
  DEFINITIONS_CACHE_MS, type CreateJourneyRequest, type UpdateJourneyRequest, type JourneyView } from "./journey-definitions.ts";
export { BackInStock, type WaveJob, BACK_IN_STOCK_REQUEST, WAVE_PAGE, type RequestOutcome } from "./back-in-stock.ts";
export { JourneyTriggers, ATTRIBUTION_MS } from "./journey-triggers.ts";
export { JourneyEngine, type StepJob } from "./journey-engine.ts";
export { CatalogAudiences, type AudienceJob } from "./catalog-audiences.ts";
export { JourneyLog, SKIP_REASONS, EXIT_REASONS, type JourneyStats } from "./journey-log.ts";
export type { JourneyRecord, JourneyStatus, EnrollmentRecord, EnrollmentState, Subject, LogKind } from "./records.ts";
