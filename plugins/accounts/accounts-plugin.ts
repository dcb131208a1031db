import { ACCOUNTS, definePlugin, defineRoute, notFound, reply } from "../../src/index.ts";
import { AccountsService } from "./accounts-service.ts";
import { accountsCommands } from "./commands.ts";
import { meDocs } from "./openapi.ts";
import { accountsCollections } from "./records.ts";
import { ACCOUNTS_SERVICE } from "./tokens.ts";

declare module "../../src/kernel/plugin.ts" {
  interface PluginApis {
    accounts: AccountsService;
  }
}

/** Companies, applications, API keys and legacy tokens, `GET /v1/me`, and their CLI commands. */
export function accountsPlugin() {
  return definePlugin({
    name: "accounts",
    collections: accountsCollections,
    commands: accountsCommands,
    register({ container }) {
      container.bind(ACCOUNTS_SERVICE, { useClass: AccountsService });
      container.bind(ACCOUNTS, { useFactory: (c) => c.resolve(ACCOUNTS_SERVICE) });
    },
    routes({ resolve }) {
      const accounts = resolve(ACCOUNTS_SERVICE);
      return [
        defineRoute({
          method: "GET",
          path: "/v1/me",
          auth: { kind: "api" },
          summary: "Get me",
          docs: meDocs,
          async handler({ principal }) {
            const [company, application] = await Promise.all([
              accounts.getCompany(principal.companyId),
              principal.applicationId ? accounts.getApplication(principal.applicationId) : undefined,
            ]);
            if (!company) throw notFound("company not found");
            return reply.json(200, {
              applicationName: application?.name ?? "",
              attentiveDomainName: company.domain,
              companyName: company.name,
              contactEmail: company.contactEmail,
              companyId: company.id,
            });
          },
        }),
      ];
    },
    api: ({ resolve }) => resolve(ACCOUNTS_SERVICE),
    async provisionCompany({ resolve }, company) {
      return resolve(ACCOUNTS_SERVICE).provision(company);
    },
  });
}
