export { oauthPlugin, type OAuthApi, type OAuthPluginOptions, type OAuthSettings } from "./oauth-plugin.ts";
export { OAUTH_API, SIGN_INS } from "./tokens.ts";
export { OAuthClients, checkRedirectUri, MAX_REDIRECT_URIS, type PublicApplication, type ResolvedClient } from "./oauth-clients.ts";
export { DashboardUsers, LastOwnerError, MIN_PASSWORD_LENGTH, isDashboardRole, type DashboardUser } from "./dashboard-users.ts";
export { DASHBOARD_ROLES, type DashboardRole } from "./records.ts";
export { SignIns, throttledMessage, type SignInOutcome } from "./sign-ins.ts";
export { FormCsrf, type IssuedCsrf } from "./form-csrf.ts";
export { parseCookies, serializeCookie, type CookieOptions } from "./cookies.ts";
export { Installations } from "./installations.ts";
export { AuthorizationCodes, OAuthError, AUTHORIZATION_CODE_TTL_MS, USED_CODE_RETENTION_MS, type CodeGrant } from "./authorization-codes.ts";
export { IdTokens, ID_TOKEN_TTL_SECONDS, type IdTokenClaims } from "./id-tokens.ts";
export { scryptPasswordHasher, DEFAULT_SCRYPT, type PasswordHasher, type ScryptParameters } from "./passwords.ts";
export { DEFAULT_SESSION_TTL_MS, LoginSessions } from "./login-sessions.ts";
export { DEFAULT_LOGIN_THROTTLE, LoginThrottle, type LoginThrottleSettings } from "./login-throttle.ts";
export { INSTALL_PATH, LOGIN_FAILED } from "./install-routes.ts";
export type { OAuthClientRecord, DashboardUserRecord, LoginSessionRecord, AuthorizationCodeRecord, InstallationRecord } from "./records.ts";
/** The dashboard user and form token of the API reference's examples, for plugins whose examples sign in too (the console). */
export { EXAMPLE_USER, EXAMPLE_CSRF_TOKEN } from "./openapi.ts";
