import type { Scope } from "./scopes.ts";

/** What a credential is. API keys and OAuth tokens are v1 tokens; legacy tokens are separate. */
export type CredentialKind = "api_key" | "oauth" | "legacy";

/** Who is calling, once the bearer token was verified. */
export interface Principal {
  credentialId: string;
  companyId: string;
  /** The private or public application the token belongs to; legacy tokens have none. */
  applicationId?: string;
  kind: CredentialKind;
  scopes: ReadonlySet<Scope>;
}

export const isV1Credential = (kind: CredentialKind) => kind === "api_key" || kind === "oauth";
