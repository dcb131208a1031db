import type * as v from "valibot";

/** An OpenAPI security scheme object (`{ type: "http", scheme: "bearer" }`...). */
export type OpenApiSecurityScheme = Readonly<Record<string, unknown>>;

/** One answer of a route as the API reference shows it. */
export interface ResponseDoc {
  description: string;
  /** The JSON body. Absent for an error (the JSON error of DESIGN.md §5), an HTML page or an empty answer. */
  schema?: v.GenericSchema;
  /** An example of the JSON body. */
  example?: unknown;
  /** The answer is an HTML page. */
  html?: boolean;
  /** Headers of this answer beyond those every answer carries (`location` of a redirect). */
  headers?: Readonly<Record<string, { description: string; example?: string }>>;
}

/**
 * A request the route accepts. Examples tell one story: a value another
 * example's answer created (an id, an upload URL) is written as that answer's
 * example shows it.
 */
export interface RequestExample {
  params?: Readonly<Record<string, string>>;
  query?: Readonly<Record<string, string>>;
  /** JSON, the fields of a form, or the text of a raw body. */
  body?: unknown;
  /** Cookies a browser sends (install pages). */
  cookies?: Readonly<Record<string, string>>;
  /**
   * The operations (operationIds) whose examples come first in the story: their
   * answers made what this example uses. Shown as `x-example-after`.
   */
  after?: readonly string[];
}

/** What the OpenAPI document says of a route beyond its method, path, auth and schemas. */
export interface RouteDocs {
  /** The reference service's operationId where reachkit serves the same operation (a generated client reads alike); else reachkit's own. */
  operationId: string;
  /** The group the API reference lists the route under. */
  tag: string;
  /** Longer text (Markdown). */
  description?: string;
  /** Path parameters, with a description each. */
  params?: Readonly<Record<string, string>>;
  /** Query parameters the handler reads itself (the route declares no query schema). */
  query?: v.GenericSchema;
  /** The body as documented where the route reads it itself (a form read from a raw body, an upload). */
  requestBody?: { contentType: string; schema: v.GenericSchema; description?: string };
  /**
   * Answers by status: the successes and the route's own errors. The errors of
   * its kind (bad token, missing scope, invalid body, rate limit) are added.
   */
  responses: Readonly<Record<number, ResponseDoc>>;
  example: RequestExample;
  /**
   * For a route without a bearer token that checks something else (a session
   * cookie, client credentials): the alternatives; `optional` when the route
   * answers without any of them too.
   */
  security?: { schemes: Readonly<Record<string, OpenApiSecurityScheme>>; optional?: boolean };
  /** A scheme for the v1 tokens this route issues (OAuth): every v1 route lists it beside the API key. */
  issuesApiTokens?: { name: string; scheme: OpenApiSecurityScheme };
}
