import * as v from "valibot";
import { SCOPE_DESCRIPTIONS } from "../auth/scopes.ts";
import type { AnyRoute, HostGroup } from "../http/route.ts";
import type { OpenApiSecurityScheme, ResponseDoc, RouteDocs } from "../http/route-docs.ts";
import { acceptsNothing, jsonSchemaOf } from "./json-schema.ts";

type JsonObject = Record<string, unknown>;

export interface OpenApiOptions {
  /** The public URL of a path on a host group (the kit's `publicUrl`, mount prefix included). */
  publicUrl(group: HostGroup, path: string): string;
}

/** The hosts of the interface, as the document names their servers. */
const HOST_DESCRIPTIONS: Readonly<Record<HostGroup, string>> = {
  api: "The main host ({base_url}): /v1 and /1 paths",
  messages: "The archived messages host ({messages_url})",
  tactical: "The appointments and legacy privacy host ({tactical_url})",
  ui: "The install page host ({ui_url})",
  short: "The short links' host (reachkit's own: tracked links in campaign messages)",
};

/** The JSON error of every failure (DESIGN.md §5). */
export const errorBodySchema = v.object({
  error: v.object({
    id: v.pipe(v.string(), v.description("The trace id, also in the x-trace-id header; quote it when reporting a problem")),
    code: v.pipe(v.string(), v.description("A machine-readable code: invalid_request, unauthorized, forbidden, not_found, rate_limited...")),
    message: v.string(),
    details: v.optional(
      v.pipe(
        v.array(v.object({ path: v.pipe(v.string(), v.description("The offending field, e.g. user.phone")), message: v.string() })),
        v.description("Every offending field of a request that failed validation"),
      ),
    ),
  }),
});

/** What each error status answers, as its example shows it. */
const ERROR_CODES: Readonly<Record<number, [code: string, message: string]>> = {
  400: ["invalid_request", "invalid request: user.phone"],
  401: ["unauthorized", "unknown or revoked token"],
  403: ["forbidden", "the token lacks the scope needed"],
  404: ["not_found", "not found"],
  409: ["conflict", "a record with the same key exists"],
  413: ["payload_too_large", "request body exceeds 1048576 bytes"],
  415: ["unsupported_media_type", "Content-Type must be application/json"],
  429: ["rate_limited", "too many requests; slow down"],
};

function errorExample(status: number): unknown {
  const [code, message] = ERROR_CODES[status] ?? ["error", "the request failed"];
  const details = status === 400 ? { details: [{ path: "user.phone", message: "must be E.164: + and the country code, then digits only (e.g. +19148440001)" }] } : {};
  return { error: { id: "4f5cf1fe-655b-4916-8919-7f7773943e51", code, message, ...details } };
}

const header = (description: string, example?: string) => ({ description, schema: { type: "string" }, ...(example ? { example } : {}) });
const TRACE_HEADER = { "x-trace-id": { $ref: "#/components/headers/TraceId" } };
const RATE_HEADERS = { "x-ratelimit-limit": { $ref: "#/components/headers/RateLimitLimit" }, "x-ratelimit-remaining": { $ref: "#/components/headers/RateLimitRemaining" } };

/** The errors a route can answer by the kind of its auth and body, beside those its docs list. */
function generalErrors(route: AnyRoute): Record<number, string> {
  const errors: Record<number, string> = {};
  const hasInput = route.body !== undefined || route.query !== undefined || route.docs?.query !== undefined;
  if (route.body?.kind === "json" || route.body?.kind === "form" || hasInput) errors[400] = "The request is invalid: every offending field is listed in error.details";
  if (route.auth.kind === "api") {
    errors[401] = "The bearer token is missing, unknown, revoked, or not a v1 token";
    if ((route.auth.anyOfScopes ?? []).length > 0) errors[403] = `The token lacks the scope ${route.auth.anyOfScopes!.join(" or ")}`;
  }
  if (route.auth.kind === "legacy") {
    if (route.auth.invalidTokenStatus === 403) errors[403] = "The legacy token is missing or invalid";
    else errors[401] = "The legacy token is missing or invalid";
  }
  if (route.body !== undefined) errors[413] = "The body is larger than the kit's limit";
  if (route.body?.kind === "json" || route.body?.kind === "form") errors[415] = "The Content-Type is not the one this route reads";
  if (route.auth.kind !== "none") errors[429] = "Too many requests for this token on this route: retry after Retry-After seconds";
  return errors;
}

/** `/v1/privacy/delete-request/:id` → `/v1/privacy/delete-request/{id}`. */
export const openApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");

const pathParams = (path: string) => [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => match[1]!);

/** An operationId for a route without docs: its method and path in camel case. */
function defaultOperationId(route: AnyRoute): string {
  const words = route.path.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return route.method.toLowerCase() + words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join("");
}

function securityOf(route: AnyRoute, tokenSchemes: readonly string[]): JsonObject[] | undefined {
  const auth = route.auth;
  if (auth.kind === "legacy") return [{ LegacyToken: [] }];
  if (auth.kind === "api") {
    const scopes = auth.anyOfScopes ?? [];
    const alternatives = scopes.length === 0 ? [[]] : scopes.map((scope) => [scope]);
    // Scopes on a bearer scheme are allowed in 3.1 (roles); they tell which scopes the API key needs.
    return ["ApiKey", ...tokenSchemes].flatMap((scheme) => alternatives.map((needed) => ({ [scheme]: needed })));
  }
  const documented = route.docs?.security;
  if (!documented) return [];
  return [...(documented.optional ? [{}] : []), ...Object.keys(documented.schemes).map((name) => ({ [name]: [] }))];
}

function parametersOf(route: AnyRoute, docs: RouteDocs | undefined): JsonObject[] {
  const example = docs?.example;
  const parameters: JsonObject[] = pathParams(route.path).map((name) => ({
    name,
    in: "path",
    required: true,
    schema: { type: "string" },
    ...(docs?.params?.[name] ? { description: docs.params[name] } : {}),
    ...(example?.params?.[name] !== undefined ? { example: example.params[name] } : {}),
  }));
  const querySchema = route.query ?? docs?.query;
  if (querySchema) {
    const schema = jsonSchemaOf(querySchema) as { properties?: Record<string, JsonObject>; required?: string[] };
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      const { description, ...rest } = property;
      parameters.push({
        name,
        in: "query",
        required: schema.required?.includes(name) ?? false,
        schema: rest,
        ...(description ? { description } : {}),
        ...(example?.query?.[name] !== undefined ? { example: example.query[name] } : {}),
      });
    }
  }
  for (const [name, value] of Object.entries(example?.cookies ?? {})) {
    parameters.push({ name, in: "cookie", required: false, schema: { type: "string" }, example: value });
  }
  return parameters;
}

function requestBodyOf(route: AnyRoute, docs: RouteDocs | undefined): JsonObject | undefined {
  const body = route.body;
  const example = docs?.example.body;
  const withExample = (content: JsonObject) => (example === undefined ? content : { ...content, example });
  if (docs?.requestBody) {
    const { contentType, schema, description } = docs.requestBody;
    return { required: !acceptsNothing(schema), ...(description ? { description } : {}), content: { [contentType]: withExample({ schema: jsonSchemaOf(schema) }) } };
  }
  if (!body) return undefined;
  if (body.kind === "raw") return { required: true, content: { "application/octet-stream": withExample({ schema: { type: "string", format: "binary" } }) } };
  const schema = body.kind === "json" ? (body.documented ?? body.schema) : body.schema;
  const type = body.kind === "json" ? "application/json" : "application/x-www-form-urlencoded";
  return { required: !acceptsNothing(schema), content: { [type]: withExample({ schema: jsonSchemaOf(schema) }) } };
}

function responseOf(status: number, doc: ResponseDoc, authenticated: boolean): JsonObject {
  const headers: JsonObject = { ...TRACE_HEADER };
  // Sent once the token is known and counted: on its answers and on the 429.
  if (authenticated && (status < 400 || status === 429)) Object.assign(headers, RATE_HEADERS);
  if (status === 429 && !doc.html) headers["retry-after"] = { $ref: "#/components/headers/RetryAfter" };
  if (status === 401 && !doc.html) headers["www-authenticate"] = header("The scheme to authenticate with", 'Bearer realm="reachkit"');
  for (const [name, value] of Object.entries(doc.headers ?? {})) headers[name] = header(value.description, value.example);
  const response: JsonObject = { description: doc.description, headers };
  const withExample = (content: JsonObject) => (doc.example === undefined ? content : { ...content, example: doc.example });
  if (doc.html) response.content = { "text/html": { schema: { type: "string" } } };
  else if (doc.schema) response.content = { "application/json": withExample({ schema: jsonSchemaOf(doc.schema) }) };
  else if (status >= 400) response.content = { "application/json": { schema: { $ref: "#/components/schemas/Error" }, example: doc.example ?? errorExample(status) } };
  return response;
}

function operationOf(route: AnyRoute, tokenSchemes: readonly string[]): JsonObject {
  const docs = route.docs;
  const responses: Record<number, ResponseDoc> = { ...(docs?.responses ?? {}) };
  for (const [status, description] of Object.entries(generalErrors(route))) responses[Number(status)] ??= { description };
  if (!docs) responses[200] ??= { description: "The route's answer" };
  const authenticated = route.auth.kind !== "none";
  const operation: JsonObject = {
    operationId: docs?.operationId ?? defaultOperationId(route),
    ...(route.summary ? { summary: route.summary } : {}),
    ...(docs?.description ? { description: docs.description } : {}),
    tags: [docs?.tag ?? "Other"],
  };
  const parameters = parametersOf(route, docs);
  if (parameters.length > 0) operation.parameters = parameters;
  const requestBody = requestBodyOf(route, docs);
  if (requestBody) operation.requestBody = requestBody;
  operation.responses = Object.fromEntries(Object.entries(responses).map(([status, doc]) => [status, responseOf(Number(status), doc, authenticated)]));
  const security = securityOf(route, tokenSchemes);
  if (security) operation.security = security;
  if (docs?.example.after?.length) operation["x-example-after"] = docs.example.after;
  return operation;
}

function securitySchemes(routes: readonly AnyRoute[]): Record<string, OpenApiSecurityScheme> {
  const schemes: Record<string, OpenApiSecurityScheme> = {
    ApiKey: {
      type: "http",
      scheme: "bearer",
      description: "A private application's API key, or a public application's OAuth access token, as `Authorization: Bearer <token>`. Each route lists the scopes the token needs (any one of them).",
    },
    LegacyToken: {
      type: "http",
      scheme: "bearer",
      description: "The company's legacy token (`reachkit init` prints it), for the /1 paths, the messages host and the tactical host only.",
    },
  };
  for (const route of routes) {
    for (const [name, scheme] of Object.entries(route.docs?.security?.schemes ?? {})) schemes[name] = scheme;
    const issued = route.docs?.issuesApiTokens;
    if (issued) schemes[issued.name] = issued.scheme;
  }
  return schemes;
}

/** The OAuth 2.0 scheme of the v1 tokens that an install issues: its URLs on the kit's hosts and every scope. */
export function oauthScheme(options: OpenApiOptions, authorizationPath: string, tokenPath: string): OpenApiSecurityScheme {
  return {
    type: "oauth2",
    description: "A public application's access token, from the install page and the token exchange (authorization code grant).",
    flows: {
      authorizationCode: {
        authorizationUrl: options.publicUrl("ui", authorizationPath),
        tokenUrl: options.publicUrl("api", tokenPath),
        scopes: { ...SCOPE_DESCRIPTIONS },
      },
    },
  };
}

/** The OpenAPI 3.1 document of a kit's route table. */
export function openApiDocument(routes: readonly AnyRoute[], options: OpenApiOptions): Record<string, unknown> {
  const tokenSchemes = routes.flatMap((route) => (route.docs?.issuesApiTokens ? [route.docs.issuesApiTokens.name] : []));
  const serverOf = (group: HostGroup) => ({ url: options.publicUrl(group, ""), description: HOST_DESCRIPTIONS[group] });
  const paths: Record<string, JsonObject> = {};
  const tags: string[] = [];
  for (const route of routes) {
    const path = openApiPath(route.path);
    const group = route.host ?? "api";
    const item = (paths[path] ??= group === "api" ? {} : { servers: [serverOf(group)] });
    item[route.method.toLowerCase()] = operationOf(route, tokenSchemes);
    const tag = route.docs?.tag ?? "Other";
    if (!tags.includes(tag)) tags.push(tag);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "reachkit API",
      version: "v1",
      description:
        "Subscriptions and eligibility, a GraphQL endpoint, legacy subscriber and message endpoints, privacy requests, product catalog uploads and appointment reminders. " +
        'Every error is JSON: `{"error": {"id", "code", "message", "details"}}`, and every answer carries `x-trace-id`.',
    },
    servers: [serverOf("api")],
    tags: tags.map((name) => ({ name })),
    paths,
    components: {
      schemas: { Error: jsonSchemaOf(errorBodySchema) },
      headers: {
        TraceId: header("The trace id of the request (the one given in x-trace-id, else a new one); the same id is logged"),
        RateLimitLimit: header("Requests allowed per second for this token on this route", "150"),
        RateLimitRemaining: header("Requests left in the current second", "149"),
        RetryAfter: header("Seconds to wait before trying again", "1"),
      },
      securitySchemes: securitySchemes(routes),
    },
  };
}
