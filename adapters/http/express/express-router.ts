import { Router, type ErrorRequestHandler, type Request, type RequestHandler } from "express";
import type { HostGroup, HttpMethod, Reachkit } from "../../../src/index.ts";
import { insidePrefix, normalizePrefix, pathOf } from "../shared/mount.ts";
import { nativePaths } from "../shared/native-routes.ts";
import { answerNode, neutralFromNode } from "../shared/node-transport.ts";
import { expressPath, paramsFromExpress } from "./express-path.ts";

export interface ExpressRouterOptions {
  /** Serve reachkit under this path prefix (`/reachkit`). */
  prefix?: string;
  /** Register only the routes of these host groups, e.g. one app per listener. */
  groups?: readonly HostGroup[];
}

type RouteMethod = "get" | "post" | "put" | "patch" | "delete";
const routeMethod = (method: HttpMethod) => method.toLowerCase() as RouteMethod;

/**
 * An Express 5 router with every reachkit route registered natively. Mount it
 * with `app.use(expressRouter(kit))`, before or after `express.json()`: a body
 * the host parsed already is reused, never read again. A request no route
 * serves goes on to the host's routes (`next()`); the host's error handler is
 * left alone, because every reachkit answer, errors included, is sent here.
 */
export function expressRouter(kit: Reachkit, options: ExpressRouterOptions = {}): Router {
  const prefix = normalizePrefix(options.prefix);
  const groups = options.groups;
  const router = Router({ caseSensitive: true, strict: false });
  const neutral = (request: Request) => neutralFromNode(request, insidePrefix(request.url, prefix) ?? request.url, request.ip);

  // The methods reachkit does not serve on a path go to the core, which answers 405 with Allow.
  const answerFromCore: RequestHandler = async (request, response, next) => {
    const lookup = kit.http.lookup(request.method, pathOf(insidePrefix(request.url, prefix) ?? request.url), { groups });
    if (lookup.kind === "not_found") return next();
    await answerNode(request, response, await kit.http.respond(lookup, neutral(request)));
  };

  // No route serves OPTIONS: leave CORS preflights to the host, rather than to Express's automatic answer.
  router.use((request, _response, next) => next(request.method === "OPTIONS" ? "router" : undefined));

  const table = nativePaths(kit.http.routes, groups);
  for (const { routes } of table) {
    for (const route of routes) {
      router[routeMethod(route.method)](prefix + expressPath(route.path), async (request: Request, response) => {
        await answerNode(request, response, await kit.http.dispatch(route, paramsFromExpress(request.params), neutral(request)));
      });
    }
  }
  // After every route, so that a broader path's 405 never shadows a more specific route.
  for (const { path, unserved } of table) {
    const native = router.route(prefix + expressPath(path));
    for (const method of unserved) native[routeMethod(method)](answerFromCore);
  }

  // Express refuses a path parameter it cannot percent-decode before any handler
  // runs; the core treats that path as matching no route, so it falls through too.
  const undecodable: ErrorRequestHandler = (error, request, response, next) => {
    if (!(error instanceof URIError)) return next(error);
    return answerFromCore(request, response, next);
  };
  router.use(undecodable);
  return router;
}
