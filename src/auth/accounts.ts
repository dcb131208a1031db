import { defineToken } from "../kernel/token.ts";
import type { Principal } from "./principal.ts";

/** A tenant: the merchant that installed the application. */
export interface Company {
  id: string;
  name: string;
  /** The company's public domain or slug (reported as `attentiveDomainName` by `/v1/me`). */
  domain: string;
  contactEmail: string;
  /** The number or short code its texts are sent from. */
  senderNumber?: string;
  createdAt: number;
  deletedAt?: number;
}

/**
 * What the core and other plugins need from the accounts plugin: tenants and
 * bearer-token verification. `plugins/accounts` provides it.
 */
export interface Accounts {
  /** The principal for a bearer token, or undefined if unknown, revoked, or of a deleted company. */
  authenticate(token: string): Promise<Principal | undefined>;
  createCompany(input: { name: string; domain?: string; contactEmail?: string }): Promise<Company>;
  /** Undefined for an unknown or deleted company. */
  getCompany(id: string): Promise<Company | undefined>;
  updateCompany(id: string, patch: Partial<Pick<Company, "name" | "domain" | "contactEmail" | "senderNumber">>): Promise<Company>;
  listCompanies(): Promise<Company[]>;
}

export const ACCOUNTS = defineToken<Accounts>("Accounts", ["reachkit/plugins/accounts (accountsPlugin)"]);
