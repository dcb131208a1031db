import {
  CliUsageError,
  companyOption,
  formatFields,
  formatTable,
  listOption,
  parseScopes,
  requiredOption,
  SCOPES,
  stringOption,
  type CliCommand,
  type CliContext,
} from "../../src/index.ts";
import type { AccountsService } from "./accounts-service.ts";

async function accountsOf(context: CliContext): Promise<AccountsService> {
  return (await context.openKit()).plugin("accounts");
}

async function companyOf(accounts: AccountsService, id: string) {
  const company = await accounts.getCompany(id);
  if (!company) throw new CliUsageError(`no company ${id}`);
  return company;
}

export const accountsCommands: readonly CliCommand[] = [
  {
    name: "companies create",
    summary: "Create a company (no credentials: see applications create and tokens create)",
    options: {
      name: { type: "string", description: "Company name", required: true, placeholder: "NAME" },
      domain: { type: "string", description: "Public domain or slug (default: from the name)", placeholder: "DOMAIN" },
      "contact-email": { type: "string", description: "Contact email", placeholder: "EMAIL" },
    },
    async run(values, context) {
      const accounts = await accountsOf(context);
      const company = await accounts.createCompany({
        name: requiredOption(values, "name"),
        domain: stringOption(values, "domain"),
        contactEmail: stringOption(values, "contact-email"),
      });
      return { json: company, text: formatFields({ ...company }) };
    },
  },
  {
    name: "companies list",
    summary: "List companies",
    async run(_values, context) {
      const companies = await (await accountsOf(context)).listCompanies();
      return {
        json: companies,
        text: formatTable(companies.map((c) => ({ id: c.id, name: c.name, domain: c.domain, senderNumber: c.senderNumber ?? "" }))),
      };
    },
  },
  {
    name: "companies delete",
    summary: "Delete a company and revoke all its credentials",
    options: { id: { type: "string", description: "Company id", required: true, placeholder: "ID" } },
    async run(values, context) {
      const id = requiredOption(values, "id");
      if (!(await (await accountsOf(context)).deleteCompany(id))) throw new CliUsageError(`no company ${id}`);
      return { json: { id, deleted: true }, text: `company ${id} deleted; its credentials no longer work` };
    },
  },
  {
    name: "applications create",
    summary: "Create a private application with the chosen scopes, and print its API key once",
    options: {
      ...companyOption,
      name: { type: "string", description: "Application name", required: true, placeholder: "NAME" },
      scopes: {
        type: "string",
        multiple: true,
        description: `Scopes, comma-separated or repeated (default: all of ${SCOPES.join(", ")})`,
        placeholder: "SCOPES",
      },
    },
    async run(values, context) {
      const accounts = await accountsOf(context);
      const company = await companyOf(accounts, requiredOption(values, "company"));
      const requested = listOption(values, "scopes");
      let scopes;
      try {
        scopes = requested.length > 0 ? parseScopes(requested.join(",")) : [...SCOPES];
      } catch (error) {
        throw new CliUsageError((error as Error).message);
      }
      const application = await accounts.createApplication({ companyId: company.id, name: requiredOption(values, "name"), scopes });
      const issued = await accounts.issueCredential({ companyId: company.id, kind: "api_key", applicationId: application.id });
      const result = { applicationId: application.id, name: application.name, scopes, apiKey: issued.token };
      return { json: result, text: `${formatFields(result)}\nThe API key is shown once: store it now.` };
    },
  },
  {
    name: "applications list",
    summary: "List a company's applications",
    options: companyOption,
    async run(values, context) {
      const applications = await (await accountsOf(context)).listApplications(requiredOption(values, "company"));
      return {
        json: applications,
        text: formatTable(applications.map((a) => ({ id: a.id, name: a.name, kind: a.kind, scopes: a.scopes.join(" ") }))),
      };
    },
  },
  {
    name: "tokens create",
    summary: "Create a legacy token, or a new API key for an application; prints it once",
    options: {
      ...companyOption,
      legacy: { type: "boolean", description: "Create a legacy token (for /1/..., messages and tactical routes)" },
      application: { type: "string", description: "Create an API key for this application", placeholder: "ID" },
      label: { type: "string", description: "A label to tell tokens apart", placeholder: "TEXT" },
    },
    async run(values, context) {
      const accounts = await accountsOf(context);
      const company = await companyOf(accounts, requiredOption(values, "company"));
      const applicationId = stringOption(values, "application");
      if (!values.legacy === !applicationId) throw new CliUsageError("give either --legacy or --application ID");
      const issued = await accounts.issueCredential({
        companyId: company.id,
        kind: values.legacy ? "legacy" : "api_key",
        applicationId,
        label: stringOption(values, "label"),
      });
      const result = { credentialId: issued.credential.id, kind: issued.credential.kind, token: issued.token };
      return { json: result, text: `${formatFields(result)}\nThe token is shown once: store it now.` };
    },
  },
  {
    name: "tokens list",
    summary: "List a company's tokens (never the secrets)",
    options: companyOption,
    async run(values, context) {
      const credentials = await (await accountsOf(context)).listCredentials(requiredOption(values, "company"));
      return {
        json: credentials,
        text: formatTable(
          credentials.map((c) => ({
            id: c.id,
            kind: c.kind,
            label: c.label,
            endsWith: c.hint,
            application: c.applicationId ?? "",
            revoked: c.revokedAt ? new Date(c.revokedAt).toISOString() : "",
          })),
        ),
      };
    },
  },
  {
    name: "tokens revoke",
    summary: "Revoke a token at once",
    options: { id: { type: "string", description: "Credential id (from tokens list)", required: true, placeholder: "ID" } },
    async run(values, context) {
      const id = requiredOption(values, "id");
      if (!(await (await accountsOf(context)).revokeCredential(id))) throw new CliUsageError(`no active token ${id}`);
      return { json: { id, revoked: true }, text: `token ${id} revoked` };
    },
  },
];
