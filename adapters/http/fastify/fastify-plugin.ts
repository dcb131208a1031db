import { Readable } from "node:stream";
import type { FastifyPluginAsync, FastifyReply, FastifyRequest, RouteHandlerMethod } from "fastify";
import type { HostGroup, NeutralRequest, NeutralResponse, Reachkit } from "../../../src/index.ts";
import { insidePrefix, normalizePrefix, pathOf } from "../shared/mount.ts";
import { nativePaths } from "../shared/native-routes.ts";
import { unreadBodyArrived } from "../shared/node-transport.ts";

export interface FastifyPluginOptions {
  /** Serve reachkit under this path prefix (`/reachkit`), inside any prefix the plugin is registered with. */
  prefix?: string;
  /** Register only the routes of these host groups, e.g. one instance per listener. */
  groups?: readonly HostGroup[];
}

/**
 * An encapsulated Fastify 5 plugin registering every reachkit route natively:
 * `await app.register(fastifyPlugin(kit, { prefix: "/reachkit" }))`. Inside
 * its own scope the request body reaches the core as a stream (the core parses
 * JSON and forms with its own limits and errors, and raw uploads stay
 * streams); the host's content-type parsers, and its routes' parsing, are
 * untouched. The host's hooks and 404 handler keep working.
 */
export function fastifyPlugin(kit: Reachkit, options: FastifyPluginOptions = {}): FastifyPluginAsync {
  const prefix = normalizePrefix(options.prefix);
  const groups = options.groups;
  return async (scope) => {
    const mount = normalizePrefix(scope.prefix) + prefix;
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", (_request, payload, done) => done(null, payload));

    const neutral = (request: FastifyRequest): NeutralRequest => ({
      method: request.method,
      url: insidePrefix(request.url, mount) ?? request.url,
      headers: request.headers,
      body: request.body instanceof Readable ? { kind: "stream", stream: request.body } : undefined,
      remoteAddress: request.ip,
    });
    // A Buffer, because Fastify appends "; charset=utf-8" to a JSON content type sent with a string. After
    // the rest of a body no route read, as answerNode does for node:http and Express.
    const send = async (reply: FastifyReply, response: NeutralResponse) => {
      if (response.headers.connection !== "close") await unreadBodyArrived(reply.request.raw);
      return reply
        .code(response.status)
        .headers(response.headers)
        .send(typeof response.body === "string" ? Buffer.from(response.body) : response.body);
    };

    // The methods reachkit does not serve on a path go to the core, which answers 405 with Allow.
    const answerFromCore: RouteHandlerMethod = async (request, reply) => {
      const lookup = kit.http.lookup(request.method, pathOf(insidePrefix(request.url, mount) ?? request.url), { groups });
      if (lookup.kind === "not_found") return reply.callNotFound();
      return send(reply, await kit.http.respond(lookup, neutral(request)));
    };

    for (const { path, routes, unserved } of nativePaths(kit.http.routes, groups)) {
      for (const route of routes) {
        scope.route({
          method: route.method,
          url: prefix + route.path,
          handler: async (request, reply) => send(reply, await kit.http.dispatch(route, request.params as Record<string, string>, neutral(request))),
        });
      }
      if (unserved.length > 0) scope.route({ method: [...unserved], url: prefix + path, handler: answerFromCore });
    }
  };
}
