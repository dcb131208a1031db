import assert from "node:assert/strict";
import type { InjectResponse, Reachkit } from "../../../src/index.ts";
import { webhooksPlugin } from "../../../plugins/webhooks/index.ts";
import { serverPluginsWithFastPasswords } from "../../support/openapi-kit.ts";
import { startTestKit, type TestKit } from "../../support/test-kit.ts";

export const PASSWORD = "correct horse battery";
export const OWNER = "owner@acme.example";
export const VIEWER = "viewer@acme.example";

/** Every plugin of the self-hosted server, with a cheap password hash, and webhooks that may go to this machine (the tests' receivers). */
export const consolePlugins = () => serverPluginsWithFastPasswords().map((plugin) => (plugin.name === "webhooks" ? webhooksPlugin({ allowPrivateTargets: true }) : plugin));

/** A kit with every plugin of the self-hosted server (a cheap password hash), Acme with an owner and a viewer. */
export async function startConsoleKit(): Promise<TestKit> {
  const t = await startTestKit({ plugins: consolePlugins(), config: { rateLimits: { default: Infinity, "opt-in": Infinity, unsubscribe: Infinity, "catalog-upload": Infinity } } });
  const users = t.kit.plugin("oauth").users;
  await users.create({ companyId: t.company.companyId, email: OWNER, password: PASSWORD });
  await users.create({ companyId: t.company.companyId, email: VIEWER, password: PASSWORD, role: "viewer" });
  return t;
}

/** The form token of the first form of a page. */
export const csrfOf = (body: string) => /name="csrf_token" value="([^"]+)"/.exec(body)?.[1];

/** A browser on the console, in process: it keeps its cookies and signs in with the sign-in form. */
export class ConsoleBrowser {
  readonly cookies = new Map<string, string>();

  constructor(
    readonly kit: Reachkit,
    private readonly remoteAddress = "127.0.0.1",
  ) {}

  get(url: string): Promise<InjectResponse> {
    return this.send({ method: "GET", url });
  }

  post(url: string, fields: Record<string, string | undefined>): Promise<InjectResponse> {
    const form = new URLSearchParams();
    for (const [name, value] of Object.entries(fields)) if (value !== undefined) form.set(name, value);
    return this.send({ method: "POST", url, body: form.toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });
  }

  /** Posts a form with the CSRF token of the page at `from` (default: the overview). */
  async act(url: string, fields: Record<string, string> = {}, from = "/console"): Promise<InjectResponse> {
    const page = await this.get(from);
    assert.equal(page.status, 200, `${from}: ${page.status} ${page.body.slice(0, 300)}`);
    return this.post(url, { csrf_token: csrfOf(page.body), ...fields });
  }

  async signIn(email: string, password = PASSWORD): Promise<InjectResponse> {
    const form = await this.get("/console/sign-in");
    return this.post("/console/sign-in", { csrf_token: csrfOf(form.body), email, password, next: "/console" });
  }

  async send(request: { method: string; url: string; body?: string; headers?: Record<string, string> }): Promise<InjectResponse> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    const response = await this.kit.inject({ ...request, headers: { ...request.headers, ...(cookie ? { cookie } : {}) }, remoteAddress: this.remoteAddress });
    for (const header of (response.headers["set-cookie"] ?? "").split(/,\s*(?=[A-Za-z0-9_]+=)/)) {
      const match = /^([^=;\s]+)=([^;]*)(.*)$/.exec(header);
      if (!match) continue;
      if (/Max-Age=0/i.test(match[3]!)) this.cookies.delete(match[1]!);
      else this.cookies.set(match[1]!, match[2]!);
    }
    return response;
  }
}

/** A browser signed in as this user. */
export async function signedIn(kit: Reachkit, email: string): Promise<ConsoleBrowser> {
  const browser = new ConsoleBrowser(kit);
  const answer = await browser.signIn(email);
  assert.equal(answer.status, 303, answer.body);
  return browser;
}

/** The text of a page without its tags, entities read, spaces collapsed. */
export const pageText = (response: InjectResponse) =>
  response.body.replace(/<[^>]+>/g, " ").replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&amp;/g, "&").replace(/\s+/g, " ");
