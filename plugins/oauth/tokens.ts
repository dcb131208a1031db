import { defineToken } from "../../src/index.ts";
import type { AuthorizationCodes } from "./authorization-codes.ts";
import type { DashboardUsers } from "./dashboard-users.ts";
import type { IdTokens } from "./id-tokens.ts";
import type { Installations } from "./installations.ts";
import type { LoginSessions } from "./login-sessions.ts";
import type { LoginThrottle } from "./login-throttle.ts";
import type { OAuthClients } from "./oauth-clients.ts";
import type { OAuthApi, OAuthSettings } from "./oauth-plugin.ts";
import type { SignIns } from "./sign-ins.ts";

const PROVIDER = "reachkit/plugins/oauth (oauthPlugin)";
export const OAUTH_API = defineToken<OAuthApi>("OAuthApi", [PROVIDER]);

export const OAUTH_SETTINGS = defineToken<OAuthSettings>("OAuthSettings", [PROVIDER]);
export const OAUTH_CLIENTS_SERVICE = defineToken<OAuthClients>("OAuthClients", [PROVIDER]);
export const DASHBOARD_USERS_SERVICE = defineToken<DashboardUsers>("DashboardUsers", [PROVIDER]);
export const INSTALLATIONS_SERVICE = defineToken<Installations>("Installations", [PROVIDER]);
export const ID_TOKENS = defineToken<IdTokens>("IdTokens", [PROVIDER]);
export const LOGIN_SESSIONS_SERVICE = defineToken<LoginSessions>("LoginSessions", [PROVIDER]);
export const LOGIN_THROTTLE = defineToken<LoginThrottle>("LoginThrottle", [PROVIDER]);
export const AUTHORIZATION_CODES_SERVICE = defineToken<AuthorizationCodes>("AuthorizationCodes", [PROVIDER]);
/** Dashboard sign-ins (throttled, starting sessions), for every page with a sign-in form. */
export const SIGN_INS = defineToken<SignIns>("SignIns", [PROVIDER]);
