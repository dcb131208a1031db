import fc from "fast-check";
import type { AnyRoute, InjectRequest } from "../../../src/index.ts";
import type { FuzzWorld } from "./fuzz-world.ts";
import type { RouteExample } from "./route-examples.ts";

/** Keys that break code which indexes plain objects by untrusted names. */
const PROTOTYPE_KEYS = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "valueOf"];

/** Strings that have broken parsers before: empty, huge, control characters, lone surrogates, look-alikes of valid values. */
const nastyString = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom("\u0000", "\ud800", "\udfff", "\u202e", "%", "{", "}", "\\", "\n", "😀"), maxLength: 20 }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "",
      " ",
      "null",
      "undefined",
      "NaN",
      "-1",
      "1e309",
      "+19148440003",
      " 19148440003",
      "+1",
      "+999999999999999999999",
      "914-844-0003",
      "ada@example.com",
      "@",
      "2026-02-30T25:61:00",
      "2026-03-08T15:00:00Z",
      "9999-12-31T23:59:59",
      "P1000000Y",
      "PT-1H",
      "PT0S",
      "P1Y2M3DT4H5M6.7S",
      "America/Nowhere",
      "Etc/GMT+14",
      "en-US",
      "en_",
      "{firstName}{",
      "{{",
      "../../etc/passwd",
      "%00",
      "%ZZ",
      "javascript:alert(1)",
      "http://",
      "https://[::1",
      "TRANSACTIONAL",
      "MARKETING",
      "true",
      ...PROTOTYPE_KEYS,
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 200_000 }).map((length) => "x".repeat(length)) },
);

const nastyNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.constantFrom(0, -0, -1, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 0.1, 2 ** 31, 2 ** 53),
);

const nastyKey = fc.oneof({ weight: 4, arbitrary: fc.string({ maxLength: 12 }) }, { weight: 1, arbitrary: fc.constantFrom(...PROTOTYPE_KEYS) });

/** Any JSON value, with nasty leaves and keys. */
const nastyJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    nastyString,
    nastyNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 5 }),
    fc.dictionary(nastyKey, tie("value"), { maxKeys: 5, noNullPrototype: true }),
  ),
})).value;

/** Deeply nested arrays and objects: recursion limits of parsers and validators. */
const deepJson = fc.integer({ min: 100, max: 5_000 }).chain((depth) =>
  fc.constantFrom("[", '{"a":').map((open) => open.repeat(depth) + "1" + (open === "[" ? "]" : "}").repeat(depth)),
);

type JsonPath = (string | number)[];

function pathsOf(value: unknown, prefix: JsonPath = [], into: JsonPath[] = []): JsonPath[] {
  into.push(prefix);
  if (Array.isArray(value)) value.forEach((item, index) => pathsOf(item, [...prefix, index], into));
  else if (value !== null && typeof value === "object") for (const [key, item] of Object.entries(value)) pathsOf(item, [...prefix, key], into);
  return into;
}

/** A deep copy of `value` with the field at `path` replaced (or removed, when `replacement` is `REMOVE`). */
function withField(value: unknown, path: JsonPath, replacement: unknown): unknown {
  if (path.length === 0) return replacement === REMOVE ? undefined : replacement;
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<string | number, unknown>;
  const [head, ...rest] = path;
  if (rest.length === 0 && replacement === REMOVE) delete copy[head!];
  else copy[head!] = withField(copy[head!], rest, replacement);
  return copy;
}
const REMOVE = Symbol("remove");

/** The example with one field (or the whole value) replaced by a nasty value, removed, or given an unknown sibling. */
function mutated(example: unknown): fc.Arbitrary<unknown> {
  const paths = pathsOf(example);
  return fc.tuple(fc.nat(paths.length - 1), fc.oneof({ weight: 5, arbitrary: nastyJson }, { weight: 1, arbitrary: fc.constant<unknown>(REMOVE) })).map(([index, replacement]) =>
    withField(example, paths[index]!, replacement),
  );
}

type Credential = "right" | "wrong-kind" | "garbage" | "none";

function authorization(route: AnyRoute, world: FuzzWorld, credential: Credential, pick: number): string | undefined {
  const v1 = [world.apiKey, world.oauthToken];
  if (credential === "none") return undefined;
  if (credential === "garbage") return ["Bearer", "Bearer ", "Basic YTpi", `Bearer ${"a".repeat(600)}`, "Bearer \u00e9t\u00e9", `bearer  ${world.apiKey}x`][pick % 6];
  const right = route.auth.kind === "legacy" ? [world.legacyToken] : route.auth.kind === "api" ? v1 : [];
  const wrong = route.auth.kind === "legacy" ? v1 : [world.legacyToken];
  const tokens = credential === "right" ? right : wrong;
  return tokens.length === 0 ? undefined : `Bearer ${tokens[pick % tokens.length]}`;
}

const credentialArb = fc.oneof(
  { weight: 12, arbitrary: fc.constant<Credential>("right") },
  { weight: 1, arbitrary: fc.constant<Credential>("wrong-kind") },
  { weight: 1, arbitrary: fc.constant<Credential>("garbage") },
  { weight: 1, arbitrary: fc.constant<Credential>("none") },
);

const pathSegment = fc.oneof(
  fc.string({ minLength: 1, maxLength: 40 }).map(encodeURIComponent),
  fc.string({ unit: "binary", minLength: 1, maxLength: 20 }).map((text) => encodeURIComponent(text.replace(/[\ud800-\udfff]/g, "x"))),
  fc.constantFrom("%", "%ZZ", "%E0%A4%A", "%00", "%2F..%2F", "..", "%C0%AF", "a".repeat(1_100), "00000000-0000-0000-0000-000000000000", "__proto__", "constructor"),
);

function bodyArb(route: AnyRoute, example: RouteExample): fc.Arbitrary<{ body?: string | Buffer; contentType?: string }> {
  const spec = route.body;
  const base = example.body;
  const rightType = spec?.kind === "form" ? "application/x-www-form-urlencoded" : spec?.kind === "raw" ? (example.contentType ?? "application/octet-stream") : "application/json";
  const encode = (value: unknown): string | undefined => {
    if (value === undefined) return undefined;
    if (spec?.kind === "form" && value !== null && typeof value === "object" && !Array.isArray(value)) {
      return new URLSearchParams(Object.entries(value).map(([key, item]): [string, string] => [key, typeof item === "string" ? item : (JSON.stringify(item) ?? "")])).toString();
    }
    return typeof value === "string" && spec?.kind !== "json" ? value : JSON.stringify(value);
  };
  const exampleBodies =
    base === undefined
      ? []
      : [
          { weight: 3, arbitrary: fc.constant(base) },
          { weight: 8, arbitrary: typeof base === "string" ? fc.constant(base) : mutated(base) },
        ];
  const content: fc.Arbitrary<string | Buffer | undefined> = fc.oneof(
    ...exampleBodies.map(({ weight, arbitrary }) => ({ weight, arbitrary: arbitrary.map(encode) })),
    ...(typeof base === "string"
      ? [{ weight: 6, arbitrary: fc.tuple(fc.nat(base.length), fc.string({ maxLength: 20 })).map(([at, insert]) => base.slice(0, at) + insert + base.slice(at)) }]
      : []),
    { weight: 3, arbitrary: nastyJson.map(encode) },
    { weight: 1, arbitrary: deepJson },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)) },
    { weight: 1, arbitrary: fc.constantFrom<string | undefined>(undefined, "", "{", '{"a":1}{', "\ufeff{}", '{"__proto__":{"x":1}}', "[]", "a=1&a=2&b", "%zz=%", "null") },
  );
  const contentType = fc.oneof(
    { weight: 10, arbitrary: fc.constant<string | undefined>(rightType) },
    {
      weight: 2,
      arbitrary: fc.constantFrom<string | undefined>(
        undefined,
        "",
        "text/plain",
        "application/json; charset=utf-16",
        "application/vnd.api+json",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/xml",
        ";;;",
        "APPLICATION/JSON",
      ),
    },
  );
  return fc.record({ body: content, contentType });
}

/** Mostly the route's method; sometimes another (405, or the route sharing the path), HEAD or OPTIONS. */
const methodArb = (route: AnyRoute) =>
  fc.oneof({ weight: 14, arbitrary: fc.constant(route.method) }, { weight: 1, arbitrary: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "get", "TRACE") });

/** Random requests for one route, seeded with its example: mostly the right credential, so most reach the handler. */
export function requestArb(route: AnyRoute, world: FuzzWorld, example: RouteExample): fc.Arbitrary<InjectRequest> {
  const paramNames = [...route.path.matchAll(/:(\w+)/g)].map((match) => match[1]!);
  const params = fc.tuple(
    ...paramNames.map((name) =>
      fc.oneof({ weight: 6, arbitrary: fc.constant(encodeURIComponent(example.params?.[name] ?? "x")) }, { weight: 3, arbitrary: pathSegment }),
    ),
  );
  const exampleQuery = example.query ?? {};
  const query = fc.oneof(
    { weight: 5, arbitrary: fc.constant(new URLSearchParams(exampleQuery).toString()) },
    {
      weight: 4,
      arbitrary: fc
        .tuple(fc.constantFrom(...Object.keys(exampleQuery), "extra"), fc.oneof(nastyString, fc.constant(undefined)), fc.boolean())
        .map(([key, value, repeat]) => {
          const search = new URLSearchParams(exampleQuery);
          if (value === undefined) search.delete(key);
          else if (repeat) search.append(key, value);
          else search.set(key, value);
          return search.toString();
        }),
    },
    { weight: 2, arbitrary: fc.dictionary(nastyKey, nastyString, { maxKeys: 4 }).map((record) => new URLSearchParams(record).toString()) },
    { weight: 1, arbitrary: fc.constantFrom("%ZZ", "a=%E0%A4%A", "=", "&&&", "phone", "phone=%2B1&phone=%2B2", "email=undefined", "?") },
  );
  const extraHeaders = fc.oneof(
    { weight: 6, arbitrary: fc.constant({}) },
    {
      weight: 2,
      arbitrary: fc.record(
        {
          "x-trace-id": fc.oneof(fc.string({ maxLength: 80 }), fc.constant("abcdefgh-1234")),
          "content-length": fc.constantFrom("0", "1", "-1", "abc", "99999999999", "1e3"),
          cookie: fc.oneof(fc.string({ maxLength: 60 }), fc.constant("rk_session=x; rk_csrf=y; rk_session=z"), fc.constant("=;;=")),
          accept: fc.constantFrom("*/*", "text/html", "application/json", "\u0000"),
          "transfer-encoding": fc.constantFrom("chunked", "gzip"),
          "x-forwarded-for": fc.constantFrom("1.2.3.4", "not an ip", "::1, 1.2.3.4"),
        },
        { requiredKeys: [] },
      ),
    },
  );
  return fc
    .record({ method: methodArb(route), credential: credentialArb, pick: fc.nat(), params, query, body: bodyArb(route, example), extraHeaders, dropExampleHeaders: fc.boolean() })
    .map(({ method, credential, pick, params, query, body, extraHeaders, dropExampleHeaders }) => {
      let index = 0;
      const path = route.path.replace(/:(\w+)/g, () => params[index++]!);
      const headers: Record<string, string> = { ...(dropExampleHeaders && pick % 4 === 0 ? {} : example.headers), ...extraHeaders };
      const auth = authorization(route, world, credential, pick);
      if (auth !== undefined) headers.authorization = auth;
      if (body.contentType !== undefined) headers["content-type"] = body.contentType;
      return { method, url: query ? `${path}?${query}` : path, headers, body: body.body };
    });
}
