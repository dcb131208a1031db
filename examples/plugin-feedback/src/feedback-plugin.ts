import { definePlugin, type JobHandler } from "reachkit";
import { FeedbackService } from "./feedback-service.js";
import { feedbackCollections, THANK_JOB, type FeedbackThanked, type ThankJob } from "./records.js";
import { feedbackRoutes } from "./routes.js";
import { FEEDBACK_SERVICE, FEEDBACK_SETTINGS, type FeedbackSettings } from "./tokens.js";

// Types `kit.plugin("feedback")` and `kit.events.on("feedback.thanked", ...)` for every host.
declare module "reachkit" {
  interface PluginApis {
    feedback: FeedbackService;
  }
  interface ReachkitEvents {
    "feedback.thanked": FeedbackThanked;
  }
}

export interface FeedbackPluginOptions {
  /** Default "Thanks for your feedback!". */
  thankYouText?: string;
}

/** `POST /v1/feedback` and `GET /v1/feedback/{id}`, a durable thank-you text, and `feedback.thanked`. */
export function feedbackPlugin(options: FeedbackPluginOptions = {}) {
  const settings: FeedbackSettings = { thankYouText: options.thankYouText ?? "Thanks for your feedback!" };
  return definePlugin({
    name: "feedback",
    collections: feedbackCollections,
    register({ container }) {
      container.bind(FEEDBACK_SETTINGS, { useValue: settings });
      container.bind(FEEDBACK_SERVICE, { useClass: FeedbackService });
    },
    routes: ({ resolve }) => feedbackRoutes(resolve(FEEDBACK_SERVICE)),
    jobs: ({ resolve }) => {
      const feedback = resolve(FEEDBACK_SERVICE);
      return { [THANK_JOB]: ((payload: ThankJob) => feedback.thank(payload)) as JobHandler<never> };
    },
    api: ({ resolve }) => resolve(FEEDBACK_SERVICE),
    deleteSubjectData: ({ resolve }, subject) => resolve(FEEDBACK_SERVICE).deleteSubject(subject),
  });
}
