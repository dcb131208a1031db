// Every operation's example request, read from /openapi.json, sent through the
// kit's in-process injection on a fresh kit with a provisioned company: it must
// answer a documented success status with a body that fits the documented schema.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { Ajv2020 } from "ajv/dist/2020.js";
import { memorySms } from "../../adapters/sms/memory/index.ts";
import { EXAMPLE_COMPANY_ID } from "../../plugins/accounts/openapi.ts";
import { EXAMPLE_APPLICATION_ID, EXAMPLE_CREDENTIAL_ID } from "../../plugins/console/settings.ts";
import { EXAMPLE_DELIVERY_ID } from "../../plugins/console/webhooks.ts";
import { EXAMPLE_CLIENT_ID, EXAMPLE_CLIENT_SECRET, EXAMPLE_CSRF_TOKEN, EXAMPLE_REDIRECT_URI, EXAMPLE_USER } from "../../plugins/oauth/openapi.ts";
import { EMAIL_LINKS } from "../../plugins/subscriptions/index.ts";
import { EXAMPLE_CONFIRM_TOKEN, EXAMPLE_UNSUBSCRIBE_TOKEN } from "../../plugins/subscriptions/email-routes.ts";
import { EXAMPLE_INBOUND_TOKEN, EXAMPLE_PROVIDER_SIGNATURE, EXAMPLE_SENDER_NUMBER } from "../../plugins/subscriptions/openapi.ts";
import { EXAMPLE_WEBHOOK_ID } from "../../plugins/webhooks/index.ts";
import { serverPlugins } from "../../server/server-kit.ts";
import type { InjectRequest, InjectResponse } from "../../src/index.ts";
import { startTestKit, type Json, type TestKit } from "../support/test-kit.ts";

interface Operation {
  operationId: string;
  method: string;
  path: string;
  operation: Json;
}

const ajv = new Ajv2020({ strict: false, allErrors: true });

/**
 * One story on a fresh kit: the company is provisioned, an OAuth application
 * and a dashboard user exist, and the values they were given replace their
 * documented examples. Each answer's generated values (ids, URLs, codes)
 * replace the ones its documented example shows, in the requests that follow.
 */
class Story {
  readonly values = new Map<string, string>();
  readonly cookies = new Map<string, string>();

  constructor(readonly t: TestKit) {}

  static async start(): Promise<Story> {
    const sms = Object.assign(memorySms(), {
      // The provider signature of the example is the one this SMS adapter accepts.
      verifyInbound: (request: { headers: Record<string, string | string[] | undefined> }) => request.headers["x-twilio-signature"] === EXAMPLE_PROVIDER_SIGNATURE,
    });
    const t = await startTestKit({ plugins: serverPlugins(), sms });
    const story = new Story(t);
    const output = t.company as TestKit["company"] & { senderNumber: string; inboundWebhookPath: string };
    const oauth = t.kit.plugin("oauth");
    const developer = await t.kit.plugin("accounts").createCompany({ name: "Appmaker" });
    const { application, clientSecret } = await oauth.applications.create({
      companyId: developer.id,
      name: "Shop Sync",
      redirectUris: [EXAMPLE_REDIRECT_URI],
      scopes: ["subscriptions:read", "subscriptions:write"],
    });
    await oauth.users.create({ companyId: output.companyId, ...EXAMPLE_USER });
    // The console's examples name a key and an OAuth application of the company itself.
    const [apiKey] = await t.kit.plugin("accounts").listCredentials(output.companyId);
    const own = await oauth.applications.create({ companyId: output.companyId, name: "Own app", redirectUris: [EXAMPLE_REDIRECT_URI], scopes: ["subscriptions:read"] });
    // The links of the company's emails to the examples' subscriber, jane@example.com.
    const links = t.kit.resolve(EMAIL_LINKS);
    const tokenOf = (url: string) => new URL(url).searchParams.get("token")!;
    for (const [documented, actual] of [
      [EXAMPLE_CREDENTIAL_ID, apiKey!.id],
      [EXAMPLE_APPLICATION_ID, own.application.applicationId],
      [EXAMPLE_CONFIRM_TOKEN, tokenOf(links.confirmUrl(output.companyId, "jane@example.com", "MARKETING"))],
      [EXAMPLE_UNSUBSCRIBE_TOKEN, tokenOf(links.unsubscribeUrl(output.companyId, "jane@example.com", "MARKETING"))],
      [EXAMPLE_COMPANY_ID, output.companyId],
      [EXAMPLE_SENDER_NUMBER, output.senderNumber],
      [EXAMPLE_INBOUND_TOKEN, output.inboundWebhookPath.split("/").pop()!],
      [EXAMPLE_CLIENT_ID, application.clientId],
      [EXAMPLE_CLIENT_SECRET, clientSecret],
    ] as const) {
      story.values.set(documented, actual);
    }
    return story;
  }

  substitute<T>(value: T): T {
    if (typeof value === "string") return (this.values.get(value) ?? value) as T;
    if (Array.isArray(value)) return value.map((item) => this.substitute(item)) as T;
    if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, this.substitute(item)])) as T;
    return value;
  }

  /** Records what the answer generated in place of its documented example's values. */
  learn(documented: unknown, actual: unknown): void {
    if (typeof documented === "string" && typeof actual === "string") {
      if (documented === actual || documented.length < 8) return;
      this.values.set(documented, actual);
      const [from, to] = [urlOf(documented), urlOf(actual)];
      if (!from || !to) return;
      const [fromSegments, toSegments] = [from.pathname.split("/"), to.pathname.split("/")];
      if (fromSegments.length === toSegments.length) fromSegments.forEach((segment, at) => this.learn(decodeURIComponent(segment), decodeURIComponent(toSegments[at]!)));
      for (const [name, value] of from.searchParams) this.learn(value, to.searchParams.get(name));
    } else if (Array.isArray(documented) && Array.isArray(actual)) {
      documented.forEach((item, at) => this.learn(item, actual[at]));
    } else if (typeof documented === "object" && documented !== null && typeof actual === "object" && actual !== null) {
      for (const [key, item] of Object.entries(documented)) this.learn(item, (actual as Record<string, unknown>)[key]);
    }
  }

  request({ method, path, operation }: Operation): InjectRequest {
    const parameters: Json[] = operation.parameters ?? [];
    const example = (parameter: Json) => this.substitute(String(parameter.example));
    let url = path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(example(parameters.find((parameter) => parameter.name === name && parameter.in === "path"))));
    const query = new URLSearchParams(
      parameters.filter((parameter) => parameter.in === "query" && parameter.example !== undefined).map((parameter): [string, string] => [parameter.name, example(parameter)]),
    );
    if (query.size > 0) url += `?${query}`;
    const headers: Record<string, string> = {};
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    const security: Json[] = operation.security ?? [];
    const chosen = security.find((alternative) => Object.keys(alternative).every((scheme) => this.#credential(scheme, headers))) ?? {};
    for (const scheme of Object.keys(chosen)) this.#credential(scheme, headers, true);
    const [type, media] = Object.entries((operation.requestBody?.content ?? {}) as Record<string, Json>)[0] ?? [];
    let body: unknown;
    if (media) {
      const value = this.substitute(media.example);
      headers["content-type"] = type!;
      body = type === "application/json" ? value : type === "application/x-www-form-urlencoded" ? String(new URLSearchParams(value as Record<string, string>)) : value;
    }
    return { method: method.toUpperCase(), url, headers, body };
  }

  /** Whether this story holds a credential of the scheme; with `apply`, puts it on the request. */
  #credential(scheme: string, headers: Record<string, string>, apply = false): boolean {
    const company = this.t.company;
    const bearer = { ApiKey: company.apiKey, LegacyToken: company.legacyToken }[scheme];
    if (bearer !== undefined) {
      if (apply) headers.authorization = `Bearer ${bearer}`;
      return true;
    }
    if (scheme === "ProviderSignature") {
      if (apply) headers["x-twilio-signature"] = EXAMPLE_PROVIDER_SIGNATURE;
      return true;
    }
    return scheme === "DashboardSession" && this.cookies.has("rk_session");
  }

  async run(entry: Operation): Promise<void> {
    const request = this.request(entry);
    const response = await this.t.kit.inject(request);
    // Jobs run between requests, as on a server.
    await this.t.scheduler.flush();
    await this.#learnDelivery();
    const where = `${entry.operationId} (${request.method} ${request.url})`;
    const documented = entry.operation.responses[String(response.status)];
    assert.ok(documented && response.status < 400, `${where} answered ${response.status}: ${response.body.slice(0, 500)}`);
    this.#keepCookies(response);
    const media = documented.content?.["application/json"];
    if (media?.schema) {
      const validate = ajv.compile(media.schema);
      assert.ok(validate(response.json()), `${where}: the answer does not fit its schema: ${ajv.errorsText(validate.errors)}\n${response.body.slice(0, 500)}`);
      this.learn(media.example, response.json());
    }
    const location = documented.headers?.location?.example;
    if (location) this.learn(location, new URL(response.headers.location!, "http://kit.example").toString());
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(response.body)?.[1];
    if (csrf) this.values.set(EXAMPLE_CSRF_TOKEN, csrf);
  }

  /** A webhook delivery is made by an event, its id in no answer: the example webhook's newest delivery stands for the documented one. */
  async #learnDelivery(): Promise<void> {
    const webhookId = this.values.get(EXAMPLE_WEBHOOK_ID);
    if (webhookId === undefined || this.values.has(EXAMPLE_DELIVERY_ID)) return;
    const [delivery] = await this.t.kit.plugin("webhooks").deliveries.log(webhookId, { limit: 1 });
    if (delivery) this.values.set(EXAMPLE_DELIVERY_ID, delivery.id);
  }

  #keepCookies(response: InjectResponse): void {
    for (const cookie of (response.headers["set-cookie"] ?? "").split(/,\s*(?=[A-Za-z0-9_]+=)/)) {
      const match = /^([^=;\s]+)=([^;]*)/.exec(cookie);
      if (match) this.cookies.set(match[1]!, match[2]!);
    }
  }
}

/** A URL, or a path (a redirect within the kit), as a URL. */
function urlOf(text: string): URL | undefined {
  if (!/^(https?:\/\/|\/[^/])/.test(text)) return undefined;
  try {
    return new URL(text, "http://kit.example");
  } catch {
    return undefined;
  }
}

describe("every operation's example request", () => {
  let operations: Operation[] = [];
  let routeCount = 0;

  before(async () => {
    const story = await Story.start();
    const document = (await story.t.kit.inject({ url: "/openapi.json" })).json<Json>();
    routeCount = story.t.kit.http.routes.length;
    await story.t.stop();
    operations = Object.entries(document.paths as Record<string, Json>).flatMap(([path, item]) =>
      ["get", "post", "put", "patch", "delete"].filter((method) => item[method]).map((method) => ({ operationId: item[method].operationId, method, path, operation: item[method] })),
    );
  });

  it("is accepted by its route on a fresh kit, after the examples its story follows", async (context) => {
    assert.equal(operations.length, routeCount);
    const byId = new Map(operations.map((entry) => [entry.operationId, entry]));
    for (const entry of operations) {
      await context.test(entry.operationId, async () => {
        const story = await Story.start();
        try {
          const steps: string[] = [...(entry.operation["x-example-after"] ?? []), entry.operationId];
          for (const id of steps) {
            const step = byId.get(id);
            assert.ok(step, `${entry.operationId} follows ${id}, which is no operation`);
            await story.run(step);
          }
        } finally {
          await story.t.stop();
        }
      });
    }
  });
});

