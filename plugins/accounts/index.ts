export { accountsPlugin } from "./accounts-plugin.ts";
export { ACCOUNTS_SERVICE } from "./tokens.ts";
export { AccountsService, type IssuedCredential } from "./accounts-service.ts";
export type { ApplicationRecord, ApplicationKind, CredentialRecord, CredentialView, CompanyRecord } from "./records.ts";
