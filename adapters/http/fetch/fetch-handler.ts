import { fetchResponse, neutralFromFetch, pathAndQuery, type FetchRequestInfo, type HostGroup, type Reachkit } from "../../../src/index.ts";
import { insidePrefix, normalizePrefix, pathOf } from "../shared/mount.ts";

export interface FetchHandlerOptions {
  /** Serve reachkit under this path prefix (`/reachkit`). */
  prefix?: string;
  /** Serve only these host groups, e.g. one listener per group. */
  groups?: readonly HostGroup[];
}

/** The host's own handling of a request reachkit does not serve. */
export type FetchNext = () => Response | Promise<Response>;

/** A fetch-style handler; `info` carries what the host knows beyond the Request (the client's address). */
export type FetchHandler = (request: Request, next?: FetchNext, info?: FetchRequestInfo) => Promise<Response>;

/**
 * A `(request, next?) => Response` handler for fetch-style hosts (Bun.serve,
 * Deno.serve, Cloudflare Workers, Hono...). With `next`, a request no route
 * serves (outside the prefix, or an unknown path) goes on to the host; without
 * it, it answers the JSON 404. Without options it is `kit.fetch`. No global is
 * replaced.
 */
export function fetchHandler(kit: Reachkit, options: FetchHandlerOptions = {}): FetchHandler {
  const prefix = normalizePrefix(options.prefix);
  const groups = options.groups;
  return async (request, next, info) => {
    const url = insidePrefix(pathAndQuery(request), prefix);
    if (url === undefined) {
      if (next) return next();
      return fetchResponse(kit.http.notFound(neutralFromFetch(request, pathAndQuery(request), info)), request.method);
    }
    const lookup = kit.http.lookup(request.method, pathOf(url), { groups });
    if (lookup.kind === "not_found" && next) return next();
    return fetchResponse(await kit.http.respond(lookup, neutralFromFetch(request, url, info)), request.method);
  };
}
