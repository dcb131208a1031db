export { feedbackPlugin, type FeedbackPluginOptions } from "./feedback-plugin.js";
export { FeedbackService, type FeedbackInput } from "./feedback-service.js";
export { FEEDBACK_SERVICE } from "./tokens.js";
export { THANK_JOB, type Feedback, type FeedbackThanked } from "./records.js";
