export { accountsPlugin, ACCOUNTS_SERVICE } from "./accounts-plugin.ts";
export { AccountsService, type IssuedCredential } from "./accounts-service.ts";
export type { ApplicationRecord, ApplicationKind, CredentialRecord, CredentialView, CompanyRecord } from "./records.ts";
