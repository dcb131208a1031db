import * as v from "valibot";
import type { OpenApiSecurityScheme, RequestExample, ResponseDoc, RouteDocs } from "../../src/index.ts";
import { EXAMPLE_CSRF_TOKEN } from "../oauth/index.ts";

const TAG = "Console";

export const CONSOLE_SESSION: OpenApiSecurityScheme = {
  type: "apiKey",
  in: "cookie",
  name: "rk_console",
  description: "A dashboard user's sign-in to the console (set by its sign-in form; HttpOnly, SameSite=Lax).",
};

/** The steps that sign the examples' browser in to the console. */
export const SIGNED_IN = ["showConsoleSignIn", "signInToConsole"];
export { EXAMPLE_CSRF_TOKEN };

const page = (description: string): ResponseDoc => ({ description, html: true });
const redirect = (description: string, location: string): ResponseDoc => ({ description, headers: { location: { description: "Where the browser goes next", example: location } } });
const toSignIn = redirect("Not signed in: to the sign-in page", "/console/sign-in?next=%2Fconsole");

/** An HTML page of the signed-in console. */
export function pageDocs(input: {
  operationId: string;
  description: string;
  params?: Readonly<Record<string, string>>;
  query?: v.GenericSchema;
  example?: RequestExample;
}): RouteDocs {
  const responses: Record<number, ResponseDoc> = { 200: page("The page"), 303: toSignIn };
  if (input.params) responses[404] = page("The company has no such record: a not-found page");
  if (input.query) responses[400] = page("A page link that is out of date: an error page");
  return {
    operationId: input.operationId,
    tag: TAG,
    description: `${input.description} An HTML page for people; a viewer and an owner both see it.`,
    ...(input.params ? { params: input.params } : {}),
    ...(input.query ? { query: input.query } : {}),
    responses,
    security: { schemes: { ConsoleSession: CONSOLE_SESSION } },
    example: { ...input.example, after: [...SIGNED_IN, ...(input.example?.after ?? [])] },
  };
}

/** The query of a list page: a search, and the cursor of its next page. */
export const searchQuery = (search: string) =>
  v.object({
    q: v.optional(v.pipe(v.string(), v.description(search))),
    after: v.optional(v.pipe(v.string(), v.description("The cursor of the next page (from the page's Next link)"))),
  });

/** A form of the signed-in console: it changes something, so it needs the page's CSRF token, and (but signing out) an owner. */
export function actionDocs(input: {
  operationId: string;
  description: string;
  /** The page whose form the example posts (its CSRF token), and what the story needs before. */
  after: readonly string[];
  fields: v.GenericSchema;
  body: Record<string, string>;
  params?: Readonly<Record<string, string>>;
  /** The path parameters of the example. */
  exampleParams?: Readonly<Record<string, string>>;
  /** The answer: a redirect back to a page, or a page showing what was made (a secret shown once). */
  success: { status: 303; location: string; description: string } | { status: 200; description: string };
  ownerOnly?: boolean;
}): RouteDocs {
  const responses: Record<number, ResponseDoc> = {
    [input.success.status]: input.success.status === 303 ? redirect(input.success.description, input.success.location) : page(input.success.description),
    400: page("A field is invalid: a page naming it"),
    403: page(input.ownerOnly === false ? "The form's CSRF token is missing or out of date" : "The form's CSRF token is missing or out of date, or the user is a viewer (only owners change things)"),
  };
  if (input.success.status !== 303) responses[303] = toSignIn;
  if (input.params) responses[404] = page("The company has no such record: a not-found page");
  return {
    operationId: input.operationId,
    tag: TAG,
    description: input.description,
    ...(input.params ? { params: input.params } : {}),
    requestBody: { contentType: "application/x-www-form-urlencoded", schema: input.fields },
    responses,
    security: { schemes: { ConsoleSession: CONSOLE_SESSION } },
    example: { ...(input.exampleParams ? { params: input.exampleParams } : {}), body: { csrf_token: EXAMPLE_CSRF_TOKEN, ...input.body }, after: [...SIGNED_IN, ...input.after] },
  };
}
