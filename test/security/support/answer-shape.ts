import type { AnyRoute, InjectResponse } from "../../../src/index.ts";
import type { Json } from "../../support/test-kit.ts";
import { routeKey } from "./route-examples.ts";

/** Routes whose errors have a documented shape other than DESIGN.md §5 (wire-compat: OAuth 2.0 errors). */
const OAUTH_ERROR_ROUTES = new Set(["POST /v1/authorization-codes/tokens"]);

function parse(body: string): Json {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

const isString = (value: unknown) => typeof value === "string" && value.length > 0;

/** The DESIGN.md §5 error: `{error: {id, code, message, details?}}`, its id the response's trace id. */
function designError(response: InjectResponse, json: Json): string | undefined {
  const error = json?.error;
  if (!error || typeof error !== "object") return "the body is not {error: {...}}";
  if (!isString(error.id) || !isString(error.code) || !isString(error.message)) return "error.id, error.code or error.message is missing";
  if (error.id !== response.headers["x-trace-id"]) return "error.id is not the x-trace-id header";
  if (error.details !== undefined) {
    if (!Array.isArray(error.details)) return "error.details is not a list";
    if (!error.details.every((detail: Json) => typeof detail?.path === "string" && isString(detail?.message))) return "an error detail lacks path or message";
  }
  return undefined;
}

/**
 * What is wrong with an answer, or undefined when it is one the route may give:
 * a 2xx; a redirect (install page and short links only); a 4xx with the JSON error of DESIGN.md
 * §5 (the install page may answer its HTML error page, the token endpoint its
 * OAuth 2.0 error). Never a 5xx.
 */
export function answerProblem(route: AnyRoute, response: InjectResponse, method: string = route.method): string | undefined {
  const { status } = response;
  if (status >= 500) return `answered ${status}`;
  if (status < 200) return `answered ${status}`;
  if (status < 300) return undefined;
  if (status < 400) {
    if (route.host !== "ui" && route.host !== "short") return `answered a ${status} redirect, which only the install page and short links may`;
    return response.headers.location ? undefined : `answered ${status} without a Location`;
  }
  const type = response.headers["content-type"] ?? "";
  if (route.host === "ui" && type.startsWith("text/html")) return undefined;
  if (type !== "application/json") return `answered ${status} with content type "${type}", not application/json`;
  // HEAD answers carry no body.
  if (method.toUpperCase() === "HEAD") return undefined;
  const json = parse(response.body);
  if (OAUTH_ERROR_ROUTES.has(routeKey(route)) && isString(json?.error)) return undefined;
  const problem = designError(response, json);
  return problem ? `answered ${status} but ${problem}` : undefined;
}
