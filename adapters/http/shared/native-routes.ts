import type { AnyRoute, HostGroup, HttpMethod } from "../../../src/index.ts";

/** One path of the route table, for frameworks that register routes in their own router. */
export interface NativePath {
  /** find-my-way syntax, as the first of its routes declares it. */
  path: string;
  /** The routes of this path, whatever they name its parameters. */
  routes: AnyRoute[];
  /** Methods no route serves on this path: registered too, so that the core answers them 405 with `Allow`. */
  unserved: HttpMethod[];
}

const METHODS: readonly HttpMethod[] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/**
 * The routes of the given host groups, by path, most specific first: static
 * segments before parameters before wildcards, the order find-my-way matches
 * in, so a first-match router (Express) picks the same route as the core.
 */
export function nativePaths(routes: readonly AnyRoute[], groups?: readonly HostGroup[]): NativePath[] {
  const byShape = new Map<string, AnyRoute[]>();
  for (const route of routes) {
    if (groups && !groups.includes(route.host ?? "api")) continue;
    const shape = shapeOf(route.path);
    const same = byShape.get(shape);
    if (same) same.push(route);
    else byShape.set(shape, [route]);
  }
  return [...byShape.values()]
    .map((served) => ({ path: served[0]!.path, routes: served, unserved: METHODS.filter((method) => !served.some((route) => route.method === method)) }))
    .sort((a, b) => compareSpecificity(a.path, b.path));
}

/** A path with its parameter names dropped: `/items/:id` and `/items/:key` are one path to a router. */
function shapeOf(path: string): string {
  return path.replace(/(::)|:[A-Za-z0-9_$]+/g, (match, escapedColon: string | undefined) => escapedColon ?? ":");
}

function compareSpecificity(a: string, b: string): number {
  const left = segmentRanks(a);
  const right = segmentRanks(b);
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    if (left[i] !== right[i]) return left[i]! - right[i]!;
  }
  return right.length - left.length;
}

/** 0 for a static segment, 1 for one with a parameter, 2 for a wildcard. */
function segmentRanks(path: string): number[] {
  return path
    .split("/")
    .map((segment) => (segment.includes("*") ? 2 : segment.replaceAll("::", "").includes(":") ? 1 : 0));
}
