import * as v from "valibot";
import { oauthPlugin, scryptPasswordHasher, type OAuthPluginOptions, type PublicApplication } from "../../plugins/oauth/index.ts";
import { definePlugin, defineRoute, jsonBody, reply, type InjectResponse, type Reachkit, type Scope } from "../../src/index.ts";
import { defaultPlugins, startTestKit, type TestKit, type TestKitOptions } from "./test-kit.ts";

export const REDIRECT_URI = "https://shop-app.example.com/oauth/callback";
export const USER_EMAIL = "owner@acme.example";
export const USER_PASSWORD = "correct horse battery";

/** A cheap scrypt cost: tests sign in often, and the cost is a parameter, not behaviour. */
export const fastPasswords = scryptPasswordHasher({ N: 1024, r: 8, p: 1 });

/** v1 routes guarded by one scope each, to prove what an OAuth token may reach. */
export const scopedRoutesPlugin = definePlugin({
  name: "scoped-routes",
  routes: () => [
    defineRoute({
      method: "GET",
      path: "/v1/test/subscriptions",
      auth: { kind: "api", anyOfScopes: ["subscriptions:read"] },
      handler: ({ principal }) => reply.json(200, { companyId: principal.companyId }),
    }),
    defineRoute({
      method: "POST",
      path: "/v1/test/privacy",
      auth: { kind: "api", anyOfScopes: ["privacy_requests:write"] },
      body: jsonBody(v.object({})),
      handler: () => reply.json(200, {}),
    }),
    defineRoute({ method: "POST", path: "/1/test/legacy", auth: { kind: "legacy" }, handler: () => reply.json(200, {}) }),
  ],
});

export interface OAuthTestKit extends TestKit {
  /** A public application owned by a developer company ("Appmaker"). */
  app: PublicApplication;
  clientSecret: string;
  /** A dashboard user of Acme, the installing company. */
  user: { id: string; email: string; password: string };
}

/** A test kit with the OAuth plugin, a public application of another company, and a dashboard user of Acme. */
export async function startOAuthTestKit(
  options: TestKitOptions & { oauth?: OAuthPluginOptions; scopes?: Scope[]; redirectUris?: string[] } = {},
): Promise<OAuthTestKit> {
  const t = await startTestKit({
    ...options,
    plugins: options.plugins ?? [...defaultPlugins(), oauthPlugin({ passwordHasher: fastPasswords, ...options.oauth }), scopedRoutesPlugin],
  });
  const oauth = t.kit.plugin("oauth");
  const developer = await t.kit.plugin("accounts").createCompany({ name: "Appmaker" });
  const { application, clientSecret } = await oauth.applications.create({
    companyId: developer.id,
    name: "Shop Sync",
    redirectUris: options.redirectUris ?? [REDIRECT_URI],
    scopes: options.scopes ?? ["subscriptions:read", "subscriptions:write"],
  });
  const user = await oauth.users.create({ companyId: t.company.companyId, email: USER_EMAIL, password: USER_PASSWORD });
  return { ...t, app: application, clientSecret, user: { id: user.id, email: user.email, password: USER_PASSWORD } };
}

/** A browser's cookies, enough for the install page: one Set-Cookie per response. */
export class CookieJar {
  readonly #cookies = new Map<string, string>();

  store(response: InjectResponse): void {
    const header = response.headers["set-cookie"];
    if (!header) return;
    const [pair] = header.split(";");
    const [name, value] = pair!.split("=");
    this.#cookies.set(name!.trim(), value!.trim());
  }

  get(name: string): string | undefined {
    return this.#cookies.get(name);
  }

  delete(name: string): void {
    this.#cookies.delete(name);
  }

  header(): Record<string, string> {
    return this.#cookies.size === 0 ? {} : { cookie: [...this.#cookies].map(([name, value]) => `${name}=${value}`).join("; ") };
  }
}

/** The hidden fields of the first form of a page, decoded. */
export function hiddenFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[match[1]!] = match[2]!.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
  }
  return fields;
}

/** Drives the install page in process, as a browser would, keeping cookies. */
export class InstallClient {
  readonly jar = new CookieJar();

  constructor(
    private readonly kit: Reachkit,
    /** The client address the kit sees (sign-ins are throttled per address). */
    private readonly remoteAddress = "127.0.0.1",
  ) {}

  get(url: string): Promise<InjectResponse> {
    return this.#send({ method: "GET", url, headers: this.jar.header() });
  }

  post(url: string, fields: Record<string, string | undefined>): Promise<InjectResponse> {
    const form = new URLSearchParams();
    for (const [name, value] of Object.entries(fields)) if (value !== undefined) form.set(name, value);
    const headers = { "content-type": "application/x-www-form-urlencoded", ...this.jar.header() };
    return this.#send({ method: "POST", url, headers, body: Buffer.from(form.toString()) });
  }

  async #send(request: { method: string; url: string; headers: Record<string, string>; body?: Buffer }): Promise<InjectResponse> {
    const result = await this.kit.inject({ ...request, remoteAddress: this.remoteAddress });
    this.jar.store(result);
    return result;
  }

  /** Opens the install URL and signs in on the form it shows. */
  async signIn(installUrl: string, email = USER_EMAIL, password = USER_PASSWORD): Promise<InjectResponse> {
    const page = await this.get(installUrl);
    return this.post("/integrations/oauth-install/login", { ...hiddenFields(page.body), email, password });
  }

  /** Opens the install URL (signed in) and presses a consent button; returns the redirect's parsed location. */
  async decide(installUrl: string, decision: "authorize" | "cancel"): Promise<{ response: InjectResponse; location: URL }> {
    const page = await this.get(installUrl);
    const response = await this.post("/integrations/oauth-install", { ...hiddenFields(page.body), decision });
    // The install page's own redirects are paths, resolved against the page as a browser does.
    return { response, location: new URL(response.headers.location ?? "about:blank", "http://localhost:3000/integrations/oauth-install") };
  }
}

/** The in-process path of an install URL built by the plugin. */
export function installPath(t: OAuthTestKit, input: { redirectUri?: string; scopes?: string[]; state?: string; clientId?: string } = {}): string {
  const url = new URL(
    t.kit.plugin("oauth").installUrl({
      clientId: input.clientId ?? t.app.clientId,
      redirectUri: input.redirectUri ?? REDIRECT_URI,
      scopes: input.scopes,
      state: input.state,
    }),
  );
  return `${url.pathname}${url.search}`;
}

/** Posts the token exchange form. */
export function exchangeCode(t: OAuthTestKit, fields: Record<string, string | undefined>, headers: Record<string, string> = {}): Promise<InjectResponse> {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) form.set(name, value);
  return t.kit.inject({
    method: "POST",
    url: "/v1/authorization-codes/tokens",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: form.toString(),
  });
}

/** Signs in, authorizes, and returns the code the redirect carries. */
export async function authorizedCode(t: OAuthTestKit, client = new InstallClient(t.kit), scopes?: string[]): Promise<string> {
  if (!client.jar.get("rk_session")) await client.signIn(installPath(t, { scopes }));
  const { location } = await client.decide(installPath(t, { scopes, state: "s" }), "authorize");
  const code = location.searchParams.get("code");
  if (!code) throw new Error(`no code in ${location}`);
  return code;
}
