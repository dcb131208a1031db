import type { Readable } from "node:stream";
import * as v from "valibot";
import type { Principal } from "../auth/principal.ts";
import type { Scope } from "../auth/scopes.ts";
import type { Logger } from "../ports/logger.ts";
import type { RouteDocs } from "./route-docs.ts";

/** The hosts of the interface: {base_url}, {messages_url}, {tactical_url}, {ui_url}; and reachkit's short links' host. */
export const HOST_GROUPS = ["api", "messages", "tactical", "ui", "short"] as const;
export type HostGroup = (typeof HOST_GROUPS)[number];

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export type RouteAuth =
  /** A v1 token (API key or OAuth token) holding at least one of the scopes (none listed: any v1 token). */
  | { kind: "api"; anyOfScopes?: readonly Scope[] }
  /** A legacy token. Some legacy routes answer a bad token with 403 (interface §4.9, §4.10). */
  | { kind: "legacy"; invalidTokenStatus?: 401 | 403 }
  /** No bearer token: public routes, webhooks with their own checks, cookie sessions. */
  | { kind: "none" };

export type BodySpec =
  /** `documented`: the schema the API reference shows, when the service checks the body (see jsonBodyCheckedBy). */
  | { kind: "json"; schema: v.GenericSchema; documented?: v.GenericSchema }
  | { kind: "form"; schema: v.GenericSchema }
  /** The request body as a stream, for uploads; never buffered by the core. */
  | { kind: "raw" };

export const jsonBody = <TSchema extends v.GenericSchema>(schema: TSchema) => ({ kind: "json", schema }) as const;
/**
 * A JSON body that the route's service validates with `schema`, so that
 * in-process callers get the same checks: the core only parses it, and the API
 * reference shows `schema`.
 */
export const jsonBodyCheckedBy = (schema: v.GenericSchema) => ({ kind: "json", schema: v.unknown(), documented: schema }) as const;
export const formBody = <TSchema extends v.GenericSchema>(schema: TSchema) => ({ kind: "form", schema }) as const;
export const rawBody = () => ({ kind: "raw" }) as const;

export type BodyOf<B> = B extends { kind: "json" | "form"; schema: infer S extends v.GenericSchema }
  ? v.InferOutput<S>
  : B extends { kind: "raw" }
    ? Readable
    : undefined;

export type QueryOf<Q> = Q extends v.GenericSchema ? v.InferOutput<Q> : Record<string, string | string[]>;

export type Headers = Readonly<Record<string, string | string[] | undefined>>;

export interface RequestContext<TBody = unknown, TQuery = unknown, TAuth extends RouteAuth = RouteAuth> {
  readonly traceId: string;
  readonly method: string;
  /** The path, without the mount prefix and query string. */
  readonly path: string;
  /** Decoded path parameters. */
  readonly params: Readonly<Record<string, string>>;
  readonly query: TQuery;
  readonly body: TBody;
  /** Request headers, names lower-cased. */
  readonly headers: Headers;
  readonly principal: TAuth extends { kind: "none" } ? undefined : Principal;
  readonly logger: Logger;
  readonly remoteAddress?: string;
  /** The first value of a header. */
  header(name: string): string | undefined;
}

/** Response headers; a list sends the header once per value (several `set-cookie`). */
export type ReplyHeaders = Record<string, string | string[]>;

/** What a handler answers. JSON replies are sent as `application/json`. */
export type RouteReply =
  | { status: number; json: unknown; headers?: ReplyHeaders }
  | { status: number; html: string; headers?: ReplyHeaders }
  | { status: number; redirect: string; headers?: ReplyHeaders }
  /** Bytes of any type (static assets). */
  | { status: number; body: string | Buffer; contentType: string; headers?: ReplyHeaders }
  | { status: number; headers?: ReplyHeaders };

export const reply = {
  json: (status: number, json: unknown, headers?: ReplyHeaders): RouteReply => ({ status, json, headers }),
  html: (status: number, html: string, headers?: ReplyHeaders): RouteReply => ({ status, html, headers }),
  redirect: (location: string, status = 303): RouteReply => ({ status, redirect: location }),
  empty: (status = 204): RouteReply => ({ status }),
  bytes: (status: number, contentType: string, body: string | Buffer, headers?: ReplyHeaders): RouteReply => ({ status, body, contentType, headers }),
};

/**
 * A framework-neutral route. Adapters register it natively (Express, Fastify) or
 * through the core router (node:http, fetch, in-process injection).
 */
export interface RouteDefinition<
  B extends BodySpec | undefined = BodySpec | undefined,
  Q extends v.GenericSchema | undefined = v.GenericSchema | undefined,
  A extends RouteAuth = RouteAuth,
> {
  method: HttpMethod;
  /** find-my-way syntax: `/v1/privacy/delete-request/:id`. */
  path: string;
  /** Default "api". */
  host?: HostGroup;
  auth: A;
  body?: B;
  query?: Q;
  /** Rate-limit class (see DEFAULT_RATE_LIMITS); default "default". */
  rateLimit?: string;
  /** The largest body this route takes (413 above), when smaller than the kit's `bodyLimitBytes`. */
  bodyLimitBytes?: number;
  /** One line for docs and logs; the API reference's name of the operation. */
  summary?: string;
  /** What the OpenAPI document says of the route beyond its method, path, auth and schemas. */
  docs?: RouteDocs;
  // Method syntax on purpose: routes of different shapes share one array.
  handler(ctx: RequestContext<BodyOf<B>, QueryOf<Q>, A>): RouteReply | Promise<RouteReply>;
}

/** Erased route type, for tables of routes. */
export type AnyRoute = RouteDefinition<BodySpec | undefined, v.GenericSchema | undefined, RouteAuth>;

/** Types a route from its parts (body and query schemas give `ctx.body` and `ctx.query` their types). */
export function defineRoute<
  const B extends BodySpec | undefined = undefined,
  const Q extends v.GenericSchema | undefined = undefined,
  const A extends RouteAuth = RouteAuth,
>(route: RouteDefinition<B, Q, A>): AnyRoute {
  return route as unknown as AnyRoute;
}
