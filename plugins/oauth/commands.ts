import { randomBytes } from "node:crypto";
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
import { isDashboardRole } from "./dashboard-users.ts";
import type { OAuthApi } from "./oauth-plugin.ts";
import { DASHBOARD_ROLES } from "./records.ts";

async function oauthOf(context: CliContext): Promise<OAuthApi> {
  return (await context.openKit()).plugin("oauth");
}

/** Runs a service call, turning its refusals (unknown company, bad URI...) into usage errors. */
async function operatorInput<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new CliUsageError((error as Error).message);
  }
}

export const oauthCommands: readonly CliCommand[] = [
  {
    name: "oauth-apps create",
    summary: "Register a public (OAuth 2.0) application; prints its client secret once and its install URL",
    options: {
      company: { type: "string", description: "The company that owns the application", required: true, placeholder: "ID" },
      name: { type: "string", description: "Application name, shown on the consent page", required: true, placeholder: "NAME" },
      "redirect-uri": {
        type: "string",
        multiple: true,
        description: "An allowed redirect URI (exact match; https, or http on localhost); repeat for several",
        required: true,
        placeholder: "URI",
      },
      scopes: { type: "string", multiple: true, description: `Scopes installs may grant, comma-separated (default: all of ${SCOPES.join(", ")})`, placeholder: "SCOPES" },
    },
    async run(values, context) {
      const oauth = await oauthOf(context);
      const requested = listOption(values, "scopes");
      const { application, clientSecret } = await operatorInput(async () =>
        oauth.applications.create({
          companyId: requiredOption(values, "company"),
          name: requiredOption(values, "name"),
          redirectUris: listOption(values, "redirect-uri"),
          scopes: requested.length > 0 ? parseScopes(requested.join(",")) : [...SCOPES],
        }),
      );
      const installUrl = oauth.installUrl({ clientId: application.clientId, redirectUri: application.redirectUris[0]! });
      const result = { ...application, clientSecret, installUrl };
      return { json: result, text: `${formatFields(result)}\nThe client secret is shown once: store it now.` };
    },
  },
  {
    name: "oauth-apps list",
    summary: "List the public applications a company owns (never their secrets)",
    options: companyOption,
    async run(values, context) {
      const applications = await (await oauthOf(context)).applications.list(requiredOption(values, "company"));
      return {
        json: applications,
        text: formatTable(
          applications.map((a) => ({ id: a.applicationId, name: a.name, clientId: a.clientId, redirectUris: a.redirectUris.join(" "), scopes: a.scopes.join(" ") })),
        ),
      };
    },
  },
  {
    name: "oauth-apps rotate-secret",
    summary: "Replace a public application's client secret (the old one stops working at once); prints the new one once",
    options: { "client-id": { type: "string", description: "The application's client id", required: true, placeholder: "CLIENT_ID" } },
    async run(values, context) {
      const oauth = await oauthOf(context);
      const { application, clientSecret } = await operatorInput(() => oauth.applications.rotateSecret(requiredOption(values, "client-id")));
      const result = { clientId: application.clientId, clientSecret };
      return { json: result, text: `${formatFields(result)}\nThe client secret is shown once: store it now.` };
    },
  },
  {
    name: "oauth-installs list",
    summary: "List the public applications a company has installed",
    options: companyOption,
    async run(values, context) {
      const installations = await (await oauthOf(context)).installations.list(requiredOption(values, "company"));
      return {
        json: installations,
        text: formatTable(
          installations.map((i) => ({
            application: i.applicationId,
            token: i.credentialId,
            scopes: i.scopes.join(" "),
            installedAt: new Date(i.installedAt).toISOString(),
          })),
        ),
      };
    },
  },
  {
    name: "oauth-installs uninstall",
    summary: "Uninstall a public application from a company: its access token stops working at once",
    options: { ...companyOption, application: { type: "string", description: "Application id", required: true, placeholder: "ID" } },
    async run(values, context) {
      const companyId = requiredOption(values, "company");
      const applicationId = requiredOption(values, "application");
      if (!(await (await oauthOf(context)).installations.uninstall(companyId, applicationId))) {
        throw new CliUsageError(`company ${companyId} has not installed application ${applicationId}`);
      }
      return { json: { companyId, applicationId, uninstalled: true }, text: `application ${applicationId} uninstalled; its token no longer works` };
    },
  },
  {
    name: "dashboard-users create",
    summary: "Create a user who signs in to the install page for a company; without --password one is generated and printed once",
    options: {
      ...companyOption,
      email: { type: "string", description: "Email address (the sign-in name)", required: true, placeholder: "EMAIL" },
      password: { type: "string", description: "Password, at least 10 characters (default: generated)", placeholder: "PASSWORD" },
      role: { type: "string", description: "owner (everything, keys and users too; the default) or viewer (reads only)", placeholder: "ROLE" },
    },
    async run(values, context) {
      const oauth = await oauthOf(context);
      const given = stringOption(values, "password");
      const role = stringOption(values, "role") ?? "owner";
      if (!isDashboardRole(role)) throw new CliUsageError(`--role must be one of ${DASHBOARD_ROLES.join(", ")}`);
      const password = given ?? randomBytes(15).toString("base64url");
      const user = await operatorInput(() =>
        oauth.users.create({ companyId: requiredOption(values, "company"), email: requiredOption(values, "email"), password, role }),
      );
      const result = { ...user, ...(given === undefined ? { password } : {}) };
      return { json: result, text: formatFields(result) + (given === undefined ? "\nThe password is shown once: store it now." : "") };
    },
  },
  {
    name: "dashboard-users list",
    summary: "List a company's dashboard users",
    options: companyOption,
    async run(values, context) {
      const users = await (await oauthOf(context)).users.list(requiredOption(values, "company"));
      return { json: users, text: formatTable(users.map((u) => ({ id: u.id, email: u.email, role: u.role, createdAt: new Date(u.createdAt).toISOString() }))) };
    },
  },
  {
    name: "dashboard-users delete",
    summary: "Delete a dashboard user and end their sign-ins",
    options: { id: { type: "string", description: "User id", required: true, placeholder: "ID" } },
    async run(values, context) {
      const id = requiredOption(values, "id");
      if (!(await (await oauthOf(context)).users.delete(id))) throw new CliUsageError(`no dashboard user ${id}`);
      return { json: { id, deleted: true }, text: `dashboard user ${id} deleted` };
    },
  },
];
