import { definePlugin, oauthScheme } from "../../src/index.ts";
import { ACCOUNTS_SERVICE } from "../accounts/index.ts";
import { AuthorizationCodes } from "./authorization-codes.ts";
import { oauthCommands } from "./commands.ts";
import { DashboardUsers } from "./dashboard-users.ts";
import { IdTokens } from "./id-tokens.ts";
import { INSTALL_PATH, installRoutes } from "./install-routes.ts";
import { Installations } from "./installations.ts";
import { DEFAULT_SESSION_TTL_MS, LoginSessions } from "./login-sessions.ts";
import { DEFAULT_LOGIN_THROTTLE, LoginThrottle, type LoginThrottleSettings } from "./login-throttle.ts";
import { OAuthService } from "./oauth-api.ts";
import { OAuthClients } from "./oauth-clients.ts";
import { scryptPasswordHasher, type PasswordHasher } from "./passwords.ts";
import { SignIns } from "./sign-ins.ts";
import { dashboardUsersHaveRoles } from "./migrations.ts";
import { oauthCollections } from "./records.ts";
import { TOKEN_PATH, tokenEndpoint } from "./token-endpoint.ts";
import {
  AUTHORIZATION_CODES_SERVICE,
  DASHBOARD_USERS_SERVICE,
  ID_TOKENS,
  INSTALLATIONS_SERVICE,
  LOGIN_SESSIONS_SERVICE,
  LOGIN_THROTTLE,
  OAUTH_API,
  OAUTH_CLIENTS_SERVICE,
  OAUTH_SETTINGS,
  SIGN_INS,
} from "./tokens.ts";

export interface OAuthPluginOptions {
  /** How long a dashboard sign-in lasts (default 8 hours). */
  sessionTtlMs?: number;
  /** Failed sign-ins allowed per email and per address in a window (default 5 and 20 per 15 minutes). */
  loginThrottle?: Partial<LoginThrottleSettings>;
  /** Default: scrypt from node:crypto. */
  passwordHasher?: PasswordHasher;
}

/** The plugin's options, defaults applied. */
export interface OAuthSettings {
  sessionTtlMs: number;
  loginThrottle: LoginThrottleSettings;
  passwordHasher: PasswordHasher;
}

/** The in-process service of the OAuth plugin (`kit.plugin("oauth")`). */
export interface OAuthApi {
  /** Public applications: register, list, rotate the client secret. */
  applications: OAuthClients;
  /** The people who sign in to the install page and the console. */
  users: DashboardUsers;
  /** Installs and their access tokens: list, uninstall. */
  installations: Installations;
  /** Verifies the id_tokens the token exchange issued. */
  idTokens: IdTokens;
  /** The distribution URL of a public application: where its install starts. */
  installUrl(input: { clientId: string; redirectUri: string; scopes?: readonly string[]; state?: string }): string;
}

declare module "../../src/kernel/plugin.ts" {
  interface PluginApis {
    oauth: OAuthApi;
  }
}

/**
 * Public applications and the OAuth 2.0 authorization code grant: the install
 * page on the ui host (sign-in, consent), authorization codes, and
 * `POST /v1/authorization-codes/tokens`. Tokens are accounts credentials of
 * kind "oauth", so every v1 route accepts them within their scopes.
 */
export function oauthPlugin(options: OAuthPluginOptions = {}) {
  const settings: OAuthSettings = {
    sessionTtlMs: options.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS,
    loginThrottle: { ...DEFAULT_LOGIN_THROTTLE, ...options.loginThrottle },
    passwordHasher: options.passwordHasher ?? scryptPasswordHasher(),
  };
  return definePlugin({
    name: "oauth",
    requires: [ACCOUNTS_SERVICE],
    collections: oauthCollections,
    migrations: [dashboardUsersHaveRoles],
    commands: oauthCommands,
    register({ container }) {
      container.bind(OAUTH_SETTINGS, { useValue: settings });
      container.bind(OAUTH_CLIENTS_SERVICE, { useClass: OAuthClients });
      container.bind(DASHBOARD_USERS_SERVICE, { useClass: DashboardUsers });
      container.bind(INSTALLATIONS_SERVICE, { useClass: Installations });
      container.bind(ID_TOKENS, { useClass: IdTokens });
      container.bind(LOGIN_SESSIONS_SERVICE, { useClass: LoginSessions });
      container.bind(LOGIN_THROTTLE, { useClass: LoginThrottle });
      container.bind(AUTHORIZATION_CODES_SERVICE, { useClass: AuthorizationCodes });
      container.bind(SIGN_INS, { useClass: SignIns });
      container.bind(OAUTH_API, { useClass: OAuthService });
    },
    routes({ resolve, secret, publicUrl, config }) {
      const api = resolve(OAUTH_API);
      const accounts = resolve(ACCOUNTS_SERVICE);
      const codes = resolve(AUTHORIZATION_CODES_SERVICE);
      return [
        ...installRoutes({
          clients: api.applications,
          signIns: resolve(SIGN_INS),
          codes,
          accounts,
          secret,
          uiUrl: (path) => publicUrl("ui", path),
        }),
        tokenEndpoint({
          clients: api.applications,
          codes,
          idTokens: api.idTokens,
          accounts,
          bodyLimitBytes: config.bodyLimitBytes,
          // The reference service's name for its OAuth scheme.
          issuedTokens: { name: "OAuthFlow", scheme: oauthScheme({ publicUrl }, INSTALL_PATH, TOKEN_PATH) },
        }),
      ];
    },
    api: ({ resolve }) => resolve(OAUTH_API),
  });
}
