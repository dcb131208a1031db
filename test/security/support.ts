import { serverPluginsWithFastPasswords } from "../support/openapi-kit.ts";
import { DEFAULT_RATE_LIMITS, type AnyRoute, type InjectResponse, type Scope } from "../../src/index.ts";
import { startTestKit, type Json, type TestKit } from "../support/test-kit.ts";

/** What `provisionCompany` answers for a company of the self-hosted server. */
export interface ProvisionedCompany {
  companyId: string;
  companyName: string;
  apiKey: string;
  legacyToken: string;
  senderNumber: string;
  inboundWebhookPath: string;
  signUpSources: Array<{ id: string; type: string }>;
}

export interface SecurityKit extends TestKit {
  /** Every route of the self-hosted server, as the kit registered them. */
  routes: readonly AnyRoute[];
  /** Provisions another company with the server's plugins. */
  provision(name: string): Promise<ProvisionedCompany>;
  /** A v1 token of the company holding exactly these scopes (an API key, or an OAuth token of an installed public application). */
  tokenWith(companyId: string, scopes: readonly Scope[], kind?: "api_key" | "oauth"): Promise<string>;
  /** Sends a request with this bearer token (null: none). */
  as(token: string | null, request: { method?: string; url: string; body?: unknown; headers?: Record<string, string> }): Promise<InjectResponse>;
}

/**
 * A kit with every plugin the self-hosted server runs (the OAuth plugin with
 * a cheap password hash), so the route table is the server's. Rate limits are
 * off: they are proven in resource-limits tests, and these tests send many
 * requests within one fake second.
 */
export async function startSecurityKit(): Promise<SecurityKit> {
  const plugins = serverPluginsWithFastPasswords();
  const rateLimits = Object.fromEntries([...Object.keys(DEFAULT_RATE_LIMITS), "default"].map((name) => [name, Infinity]));
  const t = await startTestKit({ plugins, config: { rateLimits } });
  const accounts = t.kit.plugin("accounts");
  const publicApps = new Map<string, string>();
  const publicApplication = async (scopes: readonly Scope[]) => {
    const key = scopes.join(" ");
    let id = publicApps.get(key);
    if (!id) {
      const developer = await accounts.createCompany({ name: `Developer ${publicApps.size}` });
      id = (await accounts.createApplication({ companyId: developer.id, name: "Public app", scopes, kind: "public" })).id;
      publicApps.set(key, id);
    }
    return id;
  };
  return {
    ...t,
    routes: t.kit.http.routes,
    async provision(name) {
      return (await t.kit.provisionCompany({ name })).output as unknown as ProvisionedCompany;
    },
    async tokenWith(companyId, scopes, kind = "api_key") {
      const applicationId =
        kind === "oauth"
          ? await publicApplication(scopes)
          : (await accounts.createApplication({ companyId, name: `Scoped ${scopes.join(" ") || "(none)"}`, scopes })).id;
      return (await accounts.issueCredential({ companyId, kind, applicationId, scopes })).token;
    },
    as(token, request) {
      return t.request({ ...request, token });
    },
  };
}

/** `METHOD path`, the key route tables use. */
export const routeKey = (route: Pick<AnyRoute, "method" | "path">) => `${route.method} ${route.path}`;

/** The body of a response as JSON, or its text when it is not JSON (HTML pages). */
export function bodyOf(response: InjectResponse): Json {
  try {
    return JSON.parse(response.body) as Json;
  } catch {
    return response.body;
  }
}
