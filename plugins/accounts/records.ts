import type { CollectionSpec, Company, CredentialKind, Scope } from "../../src/index.ts";

export type CompanyRecord = Company;

export type ApplicationKind = "private" | "public";

export interface ApplicationRecord {
  id: string;
  companyId: string;
  name: string;
  kind: ApplicationKind;
  scopes: Scope[];
  createdAt: number;
  deletedAt?: number;
}

export interface CredentialRecord {
  id: string;
  companyId: string;
  applicationId?: string;
  kind: CredentialKind;
  /** SHA-256 of the token: the token itself is never stored. */
  tokenHash: string;
  /** The last four characters, so an operator can tell tokens apart. */
  hint: string;
  label: string;
  scopes: Scope[];
  createdAt: number;
  revokedAt?: number;
}

/** A credential as listed: everything but the hash. */
export type CredentialView = Omit<CredentialRecord, "tokenHash">;

export const COMPANIES = "accounts_companies";
export const APPLICATIONS = "accounts_applications";
export const CREDENTIALS = "accounts_credentials";

export const accountsCollections: readonly CollectionSpec[] = [
  { name: COMPANIES, indexes: [{ fields: ["domain"], unique: true }] },
  { name: APPLICATIONS, indexes: [{ fields: ["companyId"] }] },
  {
    name: CREDENTIALS,
    indexes: [{ fields: ["tokenHash"], unique: true }, { fields: ["companyId", "kind"] }, { fields: ["applicationId"] }],
  },
];
