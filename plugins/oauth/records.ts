import type { CollectionSpec, Scope } from "../../src/index.ts";

/** The OAuth side of a public application (its name and scopes live on the accounts application). */
export interface OAuthClientRecord {
  /** The accounts application id: one client per public application. */
  id: string;
  /** The company that owns and manages the application (not the ones that install it). */
  companyId: string;
  clientId: string;
  /** SHA-256 of the client secret: the secret is shown once and never stored. */
  secretHash: string;
  /** Exact strings: a redirect_uri is accepted only when it equals one of them. */
  redirectUris: string[];
  createdAt: number;
  secretRotatedAt?: number;
}

/** What a dashboard user may do: an owner everything (keys and users too), a viewer only read. */
export const DASHBOARD_ROLES = ["owner", "viewer"] as const;
export type DashboardRole = (typeof DASHBOARD_ROLES)[number];

/** A person who signs in to the install page and the console for their company. */
export interface DashboardUserRecord {
  id: string;
  companyId: string;
  /** Lower-cased, unique across companies: a sign-in names one company. */
  email: string;
  /** Users made before roles existed are owners (the migration `dashboard-users-have-roles`). */
  role: DashboardRole;
  /** `scrypt$N$r$p$salt$hash` (see passwords.ts). */
  passwordHash: string;
  createdAt: number;
}

/** A signed-in browser: the cookie holds the token, only its hash is stored. */
export interface LoginSessionRecord {
  id: string;
  tokenHash: string;
  userId: string;
  companyId: string;
  createdAt: number;
  expiresAt: number;
}

/** An authorization code: single use, short-lived, bound to everything the consent covered. */
export interface AuthorizationCodeRecord {
  id: string;
  codeHash: string;
  /** The installing company (the signed-in user's). */
  companyId: string;
  applicationId: string;
  clientId: string;
  redirectUri: string;
  scopes: Scope[];
  userId: string;
  createdAt: number;
  expiresAt: number;
  usedAt?: number;
  /** The access token issued for it, revoked if the code is presented again. */
  credentialId?: string;
}

/** A public application installed by a company, with the one access token it holds. */
export interface InstallationRecord {
  id: string;
  companyId: string;
  applicationId: string;
  credentialId: string;
  scopes: Scope[];
  installedBy: string;
  installedAt: number;
}

export const OAUTH_CLIENTS = "oauth_clients";
export const DASHBOARD_USERS = "oauth_dashboard_users";
export const LOGIN_SESSIONS = "oauth_login_sessions";
export const AUTHORIZATION_CODES = "oauth_authorization_codes";
export const INSTALLATIONS = "oauth_installations";

export const oauthCollections: readonly CollectionSpec[] = [
  { name: OAUTH_CLIENTS, indexes: [{ fields: ["clientId"], unique: true }, { fields: ["companyId"] }] },
  { name: DASHBOARD_USERS, indexes: [{ fields: ["email"], unique: true }, { fields: ["companyId"] }] },
  { name: LOGIN_SESSIONS, indexes: [{ fields: ["tokenHash"], unique: true }, { fields: ["userId"] }, { fields: ["expiresAt"] }] },
  { name: AUTHORIZATION_CODES, indexes: [{ fields: ["codeHash"], unique: true }, { fields: ["expiresAt"] }] },
  { name: INSTALLATIONS, indexes: [{ fields: ["companyId", "applicationId"], unique: true }, { fields: ["credentialId"] }] },
];
