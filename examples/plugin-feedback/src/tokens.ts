import { defineToken } from "reachkit";
import type { FeedbackService } from "./feedback-service.js";

/** The plugin's options, defaults applied. */
export interface FeedbackSettings {
  /** The text a customer gets after leaving feedback. */
  thankYouText: string;
}

// A missing binding names the module that provides it.
const PROVIDER = "reachkit-plugin-feedback (feedbackPlugin)";
export const FEEDBACK_SETTINGS = defineToken<FeedbackSettings>("FeedbackSettings", [PROVIDER]);
export const FEEDBACK_SERVICE = defineToken<FeedbackService>("FeedbackService", [PROVIDER]);
