import { createHash } from "node:crypto";
import * as v from "valibot";
import { notFound } from "../http/errors.ts";
import { defineRoute, formBody, jsonBody, rawBody, reply } from "../http/route.ts";
import { plainObject } from "../http/validation.ts";
import type { ReachkitConfigInput } from "../kernel/config.ts";
import { definePlugin, type ReachkitPlugin } from "../kernel/plugin.ts";

/** The configuration the HTTP conformance suite gives its kits: a small body limit and a route class that is always over its limit. */
export const CONFORMANCE_CONFIG: ReachkitConfigInput = {
  bodyLimitBytes: 64 * 1024,
  rateLimits: { default: 100_000, "conformance-closed": 0 },
};

/** How a raw upload ended, as its route saw it. */
export interface UploadOutcome {
  outcome: "complete" | "failed";
  bytes: number;
  sha256?: string;
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => (resolve = settle));
  return { promise, resolve };
}

function entry<T>(map: Map<string, Deferred<T>>, key: string): Deferred<T> {
  let found = map.get(key);
  if (!found) map.set(key, (found = deferred<T>()));
  return found;
}

/**
 * What the conformance routes see on the server side, so that a test waits
 * for it instead of sleeping: bytes of an upload received so far, how an
 * upload ended, a slow request under way. One probe per kit.
 */
export class ConformanceProbe {
  readonly #received = new Map<string, number>();
  readonly #waiters: Array<{ tag: string; bytes: number; resolve: () => void }> = [];
  readonly #outcomes = new Map<string, Deferred<UploadOutcome>>();
  readonly #started = new Map<string, Deferred<void>>();
  readonly #released = new Map<string, Deferred<void>>();

  /** Resolves once the upload tagged `tag` has handed its route at least `bytes` bytes. */
  received(tag: string, bytes: number): Promise<void> {
    if ((this.#received.get(tag) ?? 0) >= bytes) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ tag, bytes, resolve }));
  }

  /** Resolves with how the upload tagged `tag` ended. */
  uploadEnded(tag: string): Promise<UploadOutcome> {
    return entry(this.#outcomes, tag).promise;
  }

  /** Resolves once the slow request tagged `tag` is in its handler. */
  slowStarted(tag: string): Promise<void> {
    return entry(this.#started, tag).promise;
  }

  /** Lets the slow request tagged `tag` answer. */
  release(tag: string): void {
    entry(this.#released, tag).resolve();
  }

  /** @internal Called by the upload route as bytes arrive. */
  progress(tag: string, bytes: number): void {
    this.#received.set(tag, bytes);
    for (const waiter of [...this.#waiters]) {
      if (waiter.tag !== tag || waiter.bytes > bytes) continue;
      this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }

  /** @internal Called by the upload route when the body ended or failed. */
  ended(tag: string, outcome: UploadOutcome): void {
    entry(this.#outcomes, tag).resolve(outcome);
  }

  /** @internal Called by the slow route: marks it started and waits for its release. */
  hold(tag: string): Promise<void> {
    entry(this.#started, tag).resolve();
    return entry(this.#released, tag).promise;
  }
}

/**
 * The routes the HTTP conformance suite drives, under `/conformance/...`: JSON,
 * form and raw (streamed, counted, never buffered) bodies, path and query
 * echoes, multi-value headers, handler errors, a legacy route, a route always
 * rate limited, a slow route, and one route on the `messages` host group.
 */
export function conformancePlugin(probe: ConformanceProbe = new ConformanceProbe()): ReachkitPlugin {
  return definePlugin({
    name: "conformance",
    routes: () => [
      defineRoute({
        method: "POST",
        path: "/conformance/json",
        auth: { kind: "api" },
        body: jsonBody(plainObject({ name: v.string(), count: v.optional(v.number()), tags: v.optional(v.array(v.string())) })),
        handler: ({ body }) => reply.json(200, { received: body }),
      }),
      defineRoute({
        method: "POST",
        path: "/conformance/form",
        auth: { kind: "none" },
        body: formBody(v.object({ From: v.string(), Body: v.optional(v.string()) })),
        handler: ({ body }) => reply.json(200, { received: body }),
      }),
      defineRoute({
        method: "PUT",
        path: "/conformance/uploads/:tag",
        auth: { kind: "none" },
        body: rawBody(),
        async handler({ params, body }) {
          const tag = params.tag!;
          const hash = createHash("sha256");
          let bytes = 0;
          try {
            for await (const chunk of body) {
              hash.update(chunk as Buffer);
              bytes += (chunk as Buffer).length;
              probe.progress(tag, bytes);
            }
          } catch (error) {
            probe.ended(tag, { outcome: "failed", bytes });
            throw error;
          }
          const outcome: UploadOutcome = { outcome: "complete", bytes, sha256: hash.digest("hex") };
          probe.ended(tag, outcome);
          return reply.json(200, outcome);
        },
      }),
      defineRoute({
        method: "GET",
        path: "/conformance/params/:first/and/:second",
        auth: { kind: "none" },
        handler: ({ params, query, path }) => reply.json(200, { params, query, path }),
      }),
      defineRoute({
        method: "GET",
        path: "/conformance/headers",
        auth: { kind: "none" },
        handler: (context) =>
          reply.json(200, { tag: context.header("x-conformance-tag") }, { "set-cookie": ["first=1; Path=/", "second=2; Path=/"], "x-conformance": "yes" }),
      }),
      defineRoute({ method: "DELETE", path: "/conformance/headers", auth: { kind: "none" }, handler: () => reply.empty(204) }),
      defineRoute({
        method: "GET",
        path: "/conformance/missing",
        auth: { kind: "none" },
        handler: () => {
          throw notFound("no such thing");
        },
      }),
      defineRoute({
        method: "POST",
        path: "/conformance/legacy",
        auth: { kind: "legacy", invalidTokenStatus: 403 },
        handler: () => reply.json(200, { legacy: true }),
      }),
      defineRoute({ method: "GET", path: "/conformance/limited", auth: { kind: "api" }, rateLimit: "conformance-closed", handler: () => reply.json(200, {}) }),
      defineRoute({
        method: "GET",
        path: "/conformance/slow/:tag",
        auth: { kind: "none" },
        async handler({ params }) {
          await probe.hold(params.tag!);
          return reply.json(200, { released: params.tag });
        },
      }),
      defineRoute({ method: "GET", path: "/conformance/group", host: "messages", auth: { kind: "none" }, handler: () => reply.json(200, { group: "messages" }) }),
    ],
  });
}
