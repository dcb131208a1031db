import { ACCOUNTS, definePlugin, type JobContext } from "../../src/index.ts";
import { CATALOG_STORE } from "../catalog/index.ts";
import { PROFILES_SERVICE } from "../profiles/index.ts";
import { SEND_RULES } from "../send-rules/index.ts";
import { SUBSCRIPTIONS_SERVICE } from "../subscriptions/index.ts";
import { BackInStock, WAVE_JOB, type WaveJob } from "./back-in-stock.ts";
import { AUDIENCE_JOB, CatalogAudiences, type AudienceJob } from "./catalog-audiences.ts";
import { journeysCommands } from "./commands.ts";
import { JourneyDefinitions } from "./journey-definitions.ts";
import { JourneyEngine, STEP_JOB, type StepJob } from "./journey-engine.ts";
import { JourneyLog } from "./journey-log.ts";
import { JourneyTriggers } from "./journey-triggers.ts";
import { JourneysService } from "./journeys-service.ts";
import { journeyCollections } from "./records.ts";
import { journeyRoutes } from "./routes.ts";
import { BACK_IN_STOCK, CATALOG_AUDIENCES, JOURNEY_DEFINITIONS, JOURNEY_ENGINE, JOURNEY_LOG_SERVICE, JOURNEY_TRIGGERS, JOURNEYS_SERVICE } from "./tokens.ts";

declare module "../../src/kernel/plugin.ts" {
  interface PluginApis {
    journeys: JourneysService;
  }
}

/**
 * Journeys: the catalog's and customers' events turned into messages (back
 * in stock, price drop, low inventory, cart and browse abandonment, welcome),
 * with the shared send rules on every send. `/v1/journeys` and `reachkit
 * journeys`. Needs the profiles, catalog, subscriptions and sendRules plugins.
 */
export function journeysPlugin() {
  let stopListening: (() => void) | undefined;
  return definePlugin({
    name: "journeys",
    requires: [ACCOUNTS, PROFILES_SERVICE, SUBSCRIPTIONS_SERVICE, CATALOG_STORE, SEND_RULES],
    collections: journeyCollections,
    commands: journeysCommands,
    register({ container }) {
      container.bind(JOURNEY_DEFINITIONS, { useClass: JourneyDefinitions });
      container.bind(JOURNEY_LOG_SERVICE, { useClass: JourneyLog });
      container.bind(JOURNEY_ENGINE, { useClass: JourneyEngine });
      container.bind(BACK_IN_STOCK, { useClass: BackInStock });
      container.bind(CATALOG_AUDIENCES, { useClass: CatalogAudiences });
      container.bind(JOURNEY_TRIGGERS, { useClass: JourneyTriggers });
      container.bind(JOURNEYS_SERVICE, { useClass: JourneysService });
    },
    routes: ({ resolve }) => journeyRoutes(resolve(JOURNEYS_SERVICE)),
    jobs: ({ resolve }) => {
      const engine = resolve(JOURNEY_ENGINE);
      const backInStock = resolve(BACK_IN_STOCK);
      const audiences = resolve(CATALOG_AUDIENCES);
      return {
        [STEP_JOB]: (payload: StepJob) => engine.run(payload),
        [WAVE_JOB]: (payload: WaveJob, context: JobContext) => backInStock.wave(payload, context),
        [AUDIENCE_JOB]: (payload: AudienceJob, context: JobContext) => audiences.run(payload, context),
      };
    },
    api: ({ resolve }) => resolve(JOURNEYS_SERVICE),
    deleteSubjectData: ({ resolve }, subject) => resolve(JOURNEYS_SERVICE).deleteSubjectData(subject),
    async start({ resolve }) {
      stopListening = resolve(JOURNEY_TRIGGERS).listen();
    },
    async stop({ resolve }) {
      stopListening?.();
      await resolve(CATALOG_AUDIENCES).flush();
    },
  });
}
