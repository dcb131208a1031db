import { ACCOUNTS, definePlugin, type JobHandler } from "../../src/index.ts";
import { SUBSCRIPTIONS_SERVICE } from "../subscriptions/index.ts";
import { privacyCommands } from "./commands.ts";
import { assertProcessingDelay, PRIVACY_JOB, PrivacyRequests } from "./privacy-requests.ts";
import { privacyCollections } from "./records.ts";
import { privacyRoutes } from "./routes.ts";
import { PRIVACY_REQUESTS_SERVICE, PRIVACY_SETTINGS } from "./tokens.ts";

declare module "../../src/kernel/plugin.ts" {
  interface PluginApis {
    privacy: PrivacyRequests;
  }
}

export interface PrivacyPluginOptions {
  /** How long after a request its processing runs: 0 (default) at once, at most thirty days. */
  processingDelayMs?: number;
}

/**
 * Privacy deletion requests: `POST /v1/privacy/delete-request`, `GET
 * /v1/privacy/delete-request/{id}` and the legacy `POST /privacy/delete-request`
 * on the tactical host. A durable job deletes the subject's data in every
 * plugin (each plugin's `deleteSubjectData` hook) and the outbox.
 */
export function privacyPlugin(options: PrivacyPluginOptions = {}) {
  const processingDelayMs = options.processingDelayMs ?? 0;
  assertProcessingDelay(processingDelayMs);
  return definePlugin({
    name: "privacy",
    // The subscriptions service finds every phone and email the subject is known by.
    requires: [ACCOUNTS, SUBSCRIPTIONS_SERVICE],
    collections: privacyCollections,
    commands: privacyCommands,
    register({ container }) {
      container.bind(PRIVACY_SETTINGS, { useValue: { processingDelayMs } });
      container.bind(PRIVACY_REQUESTS_SERVICE, { useClass: PrivacyRequests });
    },
    routes: ({ resolve }) => privacyRoutes(resolve(PRIVACY_REQUESTS_SERVICE)),
    jobs: ({ resolve }) => {
      const service = resolve(PRIVACY_REQUESTS_SERVICE);
      return { [PRIVACY_JOB]: ((payload, context) => service.process(payload, context)) as JobHandler<never> };
    },
    api: ({ resolve }): PrivacyRequests => resolve(PRIVACY_REQUESTS_SERVICE),
  });
}
