import { defineToken } from "../../src/index.ts";
import type { PrivacyPluginOptions } from "./privacy-plugin.ts";
import type { PrivacyRequests } from "./privacy-requests.ts";

const PROVIDER = "reachkit/plugins/privacy (privacyPlugin)";
export const PRIVACY_REQUESTS_SERVICE = defineToken<PrivacyRequests>("PrivacyRequests", [PROVIDER]);
/** The plugin's options, defaults applied. */
export const PRIVACY_SETTINGS = defineToken<Required<PrivacyPluginOptions>>("PrivacySettings", [PROVIDER]);
