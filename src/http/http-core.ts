import { randomUUID } from "node:crypto";
import { Readable } from "node:stream";
import FindMyWay from "find-my-way";
import type { Principal } from "../auth/principal.ts";
import { isV1Credential } from "../auth/principal.ts";
import { rateLimitHeaders, tooManyRequests, type RateDecision, type RateLimiter } from "../auth/rate-limiter.ts";
import type { Logger } from "../ports/logger.ts";
import { InvalidCursorError, UniqueConstraintError } from "../ports/storage.ts";
import {
  decodeUtf8,
  isJsonMediaType,
  mediaType,
  parseFormText,
  parseJsonText,
  payloadTooLarge,
  readLimited,
  unsupportedMediaType,
} from "./body.ts";
import { errorBody, forbidden, HttpError, unauthorized } from "./errors.ts";
import type { NeutralRequest, NeutralResponse, RequestBody } from "./neutral.ts";
import type { AnyRoute, HostGroup, HttpMethod, RequestContext, RouteAuth, RouteReply } from "./route.ts";
import { parseOrThrow, queryToObject } from "./validation.ts";

export interface HttpCoreOptions {
  routes: readonly AnyRoute[];
  bodyLimitBytes: number;
  logger: Logger;
  rateLimiter: RateLimiter;
  /** Verifies a bearer token; resolved lazily so kits without authenticated routes need no accounts plugin. */
  authenticate: (token: string) => Promise<Principal | undefined>;
  /** Told of every answer: the route's pattern (`(no route)` for none), its status, and how long it took. */
  observe?: (method: string, route: string, status: number, seconds: number) => void;
}

export interface HandleOptions {
  /** Serve only these host groups (a listener per group); others answer 404. */
  groups?: readonly HostGroup[];
}

interface RouteStore {
  route: AnyRoute;
}

interface RouteMatch {
  params: Record<string, string | undefined>;
  store: RouteStore;
}

/** Where a request goes: one route with its decoded path parameters, or why no route serves it. */
export type RouteLookup =
  | { kind: "found"; route: AnyRoute; params: Record<string, string> }
  | { kind: "method_not_allowed"; allowed: readonly HttpMethod[] }
  | { kind: "not_found" }
  | { kind: "malformed" };

const METHODS: readonly HttpMethod[] = ["GET", "POST", "PUT", "PATCH", "DELETE"];
const TRACE_ID = /^[A-Za-z0-9._-]{8,64}$/;
const JSON_TYPE = "application/json";

/**
 * The framework-neutral HTTP pipeline: route, authenticate, rate-limit, parse
 * and validate, call the handler, and turn every failure into the JSON error of
 * DESIGN.md §5. Adapters only translate transport.
 */
export class HttpCore {
  readonly routes: readonly AnyRoute[];
  readonly #router = FindMyWay({ ignoreTrailingSlash: true, maxParamLength: 1000 });
  readonly #options: HttpCoreOptions;
  #closing = false;
  #inFlight = 0;
  #drained: (() => void) | undefined;

  constructor(options: HttpCoreOptions) {
    this.#options = options;
    this.routes = options.routes;
    for (const route of options.routes) {
      const store: RouteStore = { route };
      this.#router.on(route.method, route.path, () => undefined, store);
      // HEAD is GET without the body (the transport drops it), as in Express and Fastify.
      if (route.method === "GET") this.#router.on("HEAD", route.path, () => undefined, store);
    }
  }

  /** Routes a request and runs it. */
  async handle(request: NeutralRequest, options: HandleOptions = {}): Promise<NeutralResponse> {
    return this.respond(this.lookup(request.method, pathOf(request.url), options), request);
  }

  /**
   * Finds the route for a method and a path (relative to the mount prefix,
   * without the query string). Adapters that fall through to their host's
   * routes call it first and pass on `not_found`.
   */
  lookup(method: string, path: string, options: HandleOptions = {}): RouteLookup {
    const upper = method.toUpperCase();
    // No route serves OPTIONS: CORS preflights belong to the host (its CORS middleware).
    if (upper === "OPTIONS") return { kind: "not_found" };
    const match = this.#find(upper, path);
    if (match === "malformed") return { kind: "malformed" };
    if (match && inGroups(match.store.route, options)) {
      const params: Record<string, string> = {};
      for (const [key, value] of Object.entries(match.params)) if (value !== undefined) params[key] = value;
      return { kind: "found", route: match.store.route, params };
    }
    const allowed = match ? [] : this.#allowedMethods(path, options);
    return allowed.length > 0 ? { kind: "method_not_allowed", allowed } : { kind: "not_found" };
  }

  /** Runs the route a lookup found, or answers the JSON 400, 404 or 405 (with `Allow`) it calls for. */
  async respond(lookup: RouteLookup, request: NeutralRequest): Promise<NeutralResponse> {
    if (lookup.kind === "found") return this.dispatch(lookup.route, lookup.params, request);
    const method = request.method.toUpperCase();
    const path = pathOf(request.url);
    const error =
      lookup.kind === "malformed"
        ? new HttpError(400, "bad_request", "malformed request path")
        : lookup.kind === "method_not_allowed"
          ? new HttpError(405, "method_not_allowed", `${method} is not allowed on ${path}`, [], { allow: lookup.allowed.join(", ") })
          : new HttpError(404, "not_found", `no route for ${method} ${path}`);
    this.#options.observe?.(method, "(no route)", error.status, 0);
    return this.#errorResponse(traceIdOf(request), error);
  }

  /**
   * Runs one known route. Express and Fastify adapters call this directly from
   * their native routes, with the path parameters their router extracted.
   */
  async dispatch(
    route: AnyRoute,
    params: Record<string, string>,
    request: NeutralRequest,
    traceId = traceIdOf(request),
  ): Promise<NeutralResponse> {
    const started = performance.now();
    let extraHeaders: Record<string, string> = {};
    let response: NeutralResponse;
    this.#inFlight++;
    try {
      if (this.#closing) throw new HttpError(503, "shutting_down", "the server is shutting down", [], { connection: "close" });
      const principal = await this.#authenticate(route, request);
      if (principal) {
        const decision = this.#options.rateLimiter.take(principal.credentialId, route.rateLimit ?? "default");
        if (!decision.allowed) throw tooManyRequests(decision);
        extraHeaders = rateLimitHeaders(decision as RateDecision);
      }
      const queryAt = request.url.indexOf("?");
      const rawQuery = queryAt === -1 ? {} : queryToObject(new URLSearchParams(request.url.slice(queryAt + 1)));
      const query = route.query ? parseOrThrow(route.query, rawQuery, "query") : rawQuery;
      // Most routes take no body: they skip the body reader's await (one microtask turn less per request).
      let body: unknown;
      if (route.body) body = await this.#readBody(route, route.body, request);
      else drain(request.body);
      const context = new Context(traceId, request, queryAt, params, query, body, principal as Principal, this.#options.logger);
      response = toResponse(await route.handler(context), traceId, extraHeaders);
    } catch (error) {
      response = this.#errorResponse(traceId, error instanceof HttpError || !clientAborted(request.body) ? error : requestAborted(), extraHeaders);
    } finally {
      if (--this.#inFlight === 0) this.#drained?.();
    }
    const seconds = (performance.now() - started) / 1000;
    this.#options.logger.info("request", { traceId, method: request.method, path: route.path, status: response.status, ms: Math.round(seconds * 10_000) / 10 });
    this.#options.observe?.(request.method, route.path, response.status, seconds);
    return response;
  }

  /** The JSON 404 for a request no route serves (adapters use it for paths outside their prefix). */
  notFound(request: NeutralRequest): NeutralResponse {
    return this.#errorResponse(traceIdOf(request), new HttpError(404, "not_found", `no route for ${request.method} ${pathOf(request.url)}`));
  }

  /** Stops taking requests (new ones answer 503) and resolves when those under way have finished. */
  async close(): Promise<void> {
    this.#closing = true;
    if (this.#inFlight === 0) return;
    await new Promise<void>((resolve) => (this.#drained = resolve));
  }

  async #authenticate(route: AnyRoute, request: NeutralRequest): Promise<Principal | undefined> {
    const auth = route.auth;
    if (auth.kind === "none") return undefined;
    const header = request.headers.authorization;
    if (header === undefined || header === "") throw refusal(auth, "missing Authorization header");
    if (typeof header !== "string") throw refusal(auth, "more than one Authorization header");
    const match = BEARER.exec(header);
    if (!match) throw refusal(auth, 'Authorization must be "Bearer <token>"');
    const principal = await this.#options.authenticate(match[1]!);
    if (!principal) throw refusal(auth, "unknown or revoked token");
    if (auth.kind === "legacy" && principal.kind !== "legacy") throw refusal(auth, "this route needs a legacy token, not a v1 token");
    if (auth.kind === "api") {
      if (!isV1Credential(principal.kind)) throw refusal(auth, "legacy tokens work only on legacy routes");
      const scopes = auth.anyOfScopes ?? [];
      if (scopes.length > 0 && !scopes.some((scope) => principal.scopes.has(scope))) {
        throw forbidden(`the token lacks the scope ${scopes.join(" or ")}`);
      }
    }
    return principal;
  }

  async #readBody(route: AnyRoute, spec: NonNullable<AnyRoute["body"]>, request: NeutralRequest): Promise<unknown> {
    const limit = Math.min(route.bodyLimitBytes ?? Infinity, this.#options.bodyLimitBytes);
    if (spec.kind === "raw") {
      const body = request.body;
      if (!body) return Readable.from([]);
      if (body.kind === "stream") return body.stream;
      if (body.kind === "buffer") return Readable.from([body.buffer]);
      throw new HttpError(400, "bad_request", "this route takes the raw request body; the host parsed it already");
    }
    const type = mediaType(firstHeader(request.headers["content-type"]));
    let value: unknown;
    const body = request.body;
    if (body?.kind === "parsed") {
      value = body.value;
      // The host's parser applied its own limit; a route's smaller one is checked on the value's JSON.
      if (route.bodyLimitBytes !== undefined && Buffer.byteLength(JSON.stringify(value) ?? "") > limit) throw payloadTooLarge(limit);
    } else {
      const declared = Number(firstHeader(request.headers["content-length"]) ?? 0);
      if (declared > limit) throw payloadTooLarge(limit);
      const buffer = !body ? Buffer.alloc(0) : body.kind === "buffer" ? body.buffer : await readLimited(body.stream, limit);
      if (buffer.length > limit) throw payloadTooLarge(limit);
      if (buffer.length > 0) {
        if (spec.kind === "json") {
          if (!isJsonMediaType(type)) throw unsupportedMediaType(JSON_TYPE);
          value = parseJsonText(decodeUtf8(buffer));
        } else {
          if (type !== "application/x-www-form-urlencoded") throw unsupportedMediaType("application/x-www-form-urlencoded");
          value = parseFormText(decodeUtf8(buffer));
        }
      }
    }
    return parseOrThrow(spec.schema, value, "body");
  }

  #find(method: string, path: string): RouteMatch | null | "malformed" {
    try {
      return this.#router.find(method as HttpMethod, path) as RouteMatch | null;
    } catch {
      return "malformed";
    }
  }

  #allowedMethods(path: string, options: HandleOptions): HttpMethod[] {
    return METHODS.filter((method) => {
      const found = this.#find(method, path);
      return typeof found === "object" && found !== null && inGroups(found.store.route, options);
    });
  }

  #errorResponse(traceId: string, error: unknown, extraHeaders: Record<string, string> = {}): NeutralResponse {
    let httpError: HttpError;
    if (error instanceof HttpError) httpError = error;
    else if (error instanceof UniqueConstraintError) httpError = new HttpError(409, "conflict", "a record with the same key exists");
    else if (error instanceof InvalidCursorError) httpError = new HttpError(400, "invalid_cursor", "the page cursor is malformed or belongs to another listing; start again from the first page");
    else {
      this.#options.logger.error("unhandled error", { traceId, error });
      httpError = new HttpError(500, "internal_error", `internal error; quote trace id ${traceId} when reporting it`);
    }
    return {
      status: httpError.status,
      headers: { "content-type": JSON_TYPE, "x-trace-id": traceId, ...extraHeaders, ...httpError.headers },
      body: JSON.stringify(errorBody(traceId, httpError)),
    };
  }
}

/** The handler's view of a request; the per-request logger is made only if a handler logs. */
class Context implements RequestContext {
  readonly method: string;
  readonly path: string;
  readonly headers: NeutralRequest["headers"];
  readonly remoteAddress?: string;
  #logger: Logger | undefined;

  constructor(
    readonly traceId: string,
    request: NeutralRequest,
    queryAt: number,
    readonly params: Readonly<Record<string, string>>,
    readonly query: unknown,
    readonly body: unknown,
    readonly principal: Principal,
    private readonly baseLogger: Logger,
  ) {
    this.method = request.method.toUpperCase();
    this.path = queryAt === -1 ? request.url : request.url.slice(0, queryAt);
    this.headers = request.headers;
    this.remoteAddress = request.remoteAddress;
  }

  get logger(): Logger {
    return (this.#logger ??= this.baseLogger.child({ traceId: this.traceId }));
  }

  header(name: string): string | undefined {
    return firstHeader(this.headers[name.toLowerCase()]);
  }
}

const BEARER = /^Bearer +([\x21-\x7e]{1,512}) *$/i;

/** 401, or 403 on the legacy routes whose interface answers a bad token that way. */
function refusal(auth: RouteAuth, message: string): HttpError {
  return auth.kind === "legacy" && auth.invalidTokenStatus === 403 ? new HttpError(403, "forbidden", message) : unauthorized(message);
}

function toResponse(reply: RouteReply, traceId: string, extraHeaders: Record<string, string>): NeutralResponse {
  const headers: NeutralResponse["headers"] = { "x-trace-id": traceId, ...extraHeaders, ...reply.headers };
  if ("json" in reply) {
    headers["content-type"] = JSON_TYPE;
    return { status: reply.status, headers, body: JSON.stringify(reply.json) };
  }
  if ("html" in reply) {
    headers["content-type"] = "text/html; charset=utf-8";
    return { status: reply.status, headers, body: reply.html };
  }
  if ("redirect" in reply) {
    headers.location = reply.redirect;
    return { status: reply.status, headers };
  }
  if ("body" in reply) {
    headers["content-type"] = reply.contentType;
    return { status: reply.status, headers, body: reply.body };
  }
  return { status: reply.status, headers };
}

function inGroups(route: AnyRoute, options: HandleOptions): boolean {
  return !options.groups || options.groups.includes(route.host ?? "api");
}

function pathOf(url: string): string {
  const queryAt = url.indexOf("?");
  return queryAt === -1 ? url : url.slice(0, queryAt);
}

/** The client went away while sending the body: not a bug, and nobody reads the answer. */
function clientAborted(body: RequestBody | undefined): boolean {
  if (body?.kind !== "stream") return false;
  const stream = body.stream;
  return stream.errored !== null || (stream.destroyed && !stream.readableEnded);
}

const requestAborted = () => new HttpError(400, "request_aborted", "the client closed the connection before sending the whole body");

function traceIdOf(request: NeutralRequest): string {
  const given = firstHeader(request.headers["x-trace-id"]);
  return given && TRACE_ID.test(given) ? given : randomUUID();
}

export function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** A body nobody reads is still consumed, so a keep-alive connection stays usable. */
function drain(body: RequestBody | undefined): void {
  if (body?.kind === "stream") body.stream.resume();
}
