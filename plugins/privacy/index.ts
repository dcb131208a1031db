export { privacyPlugin, type PrivacyPluginOptions } from "./privacy-plugin.ts";
export { PRIVACY_REQUESTS_SERVICE } from "./tokens.ts";
export { PrivacyRequests, MAX_PROCESSING_DELAY_MS, PRIVACY_JOB, assertProcessingDelay, type PrivacyRequestProcessed, type PrivacyJob } from "./privacy-requests.ts";
export type { PrivacyRequest, PrivacyRequestOrigin } from "./records.ts";
export { parsePrivacyRequest, MAX_REQUEST_MESSAGE_LENGTH, MAX_CLIENT_USER_ID_LENGTH, type PrivacyRequestInput } from "./schemas.ts";
export { formatTimestamp, maskPhone, maskEmail, createdView, fetchedView, legacyView } from "./wire.ts";
