import { definePlugin } from "../../src/kernel/plugin.ts";
import { oauthScheme } from "../../src/openapi/openapi-document.ts";
import { defineToken } from "../../src/kernel/token.ts";
import { ACCOUNTS_SERVICE } from "../accounts/index.ts";
import { AuthorizationCodes } from "./authorization-codes.ts";
import { oauthCommands } from "./commands.ts";
import { DashboardUsers } from "./dashboard-users.ts";
import { IdTokens } from "./id-tokens.ts";
import { INSTALL_PATH, installRoutes } from "./install-routes.ts";
import { Installations } from "./installations.ts";
import { DEFAULT_SESSION_TTL_MS, LoginSessions } from "./login-sessions.ts";
import { DEFAULT_LOGIN_THROTTLE, LoginThrottle, type LoginThrottleSettings } from "./login-throttle.ts";
import { OAuthClients } from "./oauth-clients.ts";
import { scryptPasswordHasher, type PasswordHasher } from "./passwords.ts";
import { oauthCollections } from "./records.ts";
import { TOKEN_PATH, tokenEndpoint } from "./token-endpoint.ts";

export interface OAuthPluginOptions {
  /** How long a dashboard sign-in lasts (default 8 hours). */
  sessionTtlMs?: number;
  /** Failed sign-ins allowed per email and per address in a window (default 5 and 20 per 15 minutes). */
  loginThrottle?: Partial<LoginThrottleSettings>;
  /** Default: scrypt from node:crypto. */
  passwordHasher?: PasswordHasher;
}

/** The in-process service of the OAuth plugin (`kit.plugin("oauth")`). */
export interface OAuthApi {
  /** Public applications: register, list, rotate the client secret. */
  applications: OAuthClients;
  /** The people who sign in to the install page. */
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

export const OAUTH_API = defineToken<OAuthApi>("OAuthApi", ["reachkit/plugins/oauth (oauthPlugin)"]);
const LOGIN_SESSIONS_SERVICE = defineToken<LoginSessions>("LoginSessions");
const LOGIN_THROTTLE = defineToken<LoginThrottle>("LoginThrottle");
const AUTHORIZATION_CODES_SERVICE = defineToken<AuthorizationCodes>("AuthorizationCodes");

/**
 * Public applications and the OAuth 2.0 authorization code grant: the install
 * page on the ui host (sign-in, consent), authorization codes, and
 * `POST /v1/authorization-codes/tokens`. Tokens are accounts credentials of
 * kind "oauth", so every v1 route accepts them within their scopes.
 */
export function oauthPlugin(options: OAuthPluginOptions = {}) {
  const passwords = options.passwordHasher ?? scryptPasswordHasher();
  return definePlugin({
    name: "oauth",
    requires: [ACCOUNTS_SERVICE],
    collections: oauthCollections,
    commands: oauthCommands,
    register({ container, storage, clock, events, secret, publicUrl }) {
      const accounts = () => container.resolve(ACCOUNTS_SERVICE);
      container.bind(LOGIN_SESSIONS_SERVICE, { useFactory: () => new LoginSessions(storage, clock, options.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS) });
      container.bind(LOGIN_THROTTLE, { useFactory: () => new LoginThrottle(clock, { ...DEFAULT_LOGIN_THROTTLE, ...options.loginThrottle }) });
      container.bind(OAUTH_API, {
        useFactory: (): OAuthApi => ({
          applications: new OAuthClients(storage, clock, accounts()),
          users: new DashboardUsers(storage, clock, accounts(), passwords),
          installations: new Installations(storage, clock, accounts(), events),
          idTokens: new IdTokens(secret, clock, publicUrl("api", "")),
          installUrl({ clientId, redirectUri, scopes, state }) {
            const url = new URL(publicUrl("ui", INSTALL_PATH));
            url.searchParams.set("client_id", clientId);
            url.searchParams.set("redirect_uri", redirectUri);
            if (scopes && scopes.length > 0) url.searchParams.set("scope", scopes.join(" "));
            if (state !== undefined) url.searchParams.set("state", state);
            return url.toString();
          },
        }),
      });
      container.bind(AUTHORIZATION_CODES_SERVICE, {
        useFactory: (c) => new AuthorizationCodes(storage, clock, accounts(), c.resolve(OAUTH_API).installations),
      });
    },
    routes({ resolve, secret, publicUrl, config }) {
      const api = resolve(OAUTH_API);
      const accounts = resolve(ACCOUNTS_SERVICE);
      const codes = resolve(AUTHORIZATION_CODES_SERVICE);
      return [
        ...installRoutes({
          clients: api.applications,
          users: api.users,
          sessions: resolve(LOGIN_SESSIONS_SERVICE),
          throttle: resolve(LOGIN_THROTTLE),
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
