import * as v from "valibot";
import { invalidFields, type ErrorDetail } from "./errors.ts";

/** Turns valibot issues into field paths such as `user.phone` or `subscriptions.0.channel`. */
export function issuesToDetails(issues: readonly v.BaseIssue<unknown>[], root: string): ErrorDetail[] {
  return issues.map((issue) => {
    const path = issue.path?.map((item) => String(item.key)).join(".");
    return { path: path || root, message: issue.message };
  });
}

const isPlainObject = (value: unknown) => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * `v.object` that refuses arrays: valibot's own `object` accepts `[]` (typeof
 * "object") and then reports its missing keys, which names the wrong field.
 * Unknown keys are dropped, as clients send extras.
 */
export function plainObject<const TEntries extends v.ObjectEntries>(entries: TEntries, message = "must be an object") {
  return v.pipe(v.custom<Record<string, unknown>>(isPlainObject, message), v.object(entries));
}

/** Validates `input`, answering 400 with every offending field when it does not fit. */
export function parseOrThrow<TSchema extends v.GenericSchema>(
  schema: TSchema,
  input: unknown,
  root: string,
): v.InferOutput<TSchema> {
  if (Array.isArray(input) && (schema.type === "object" || schema.type === "loose_object" || schema.type === "strict_object")) {
    throw invalidFields([{ path: root, message: "must be an object, not an array" }]);
  }
  const result = v.safeParse(schema, input, { abortEarly: false });
  if (!result.success) throw invalidFields(issuesToDetails(result.issues, root));
  return result.output;
}

/** Query string values: a key given once is a string, a repeated key an array. */
export type RawQuery = Record<string, string | string[]>;

export function queryToObject(params: URLSearchParams): RawQuery {
  const query: RawQuery = {};
  for (const [key, value] of params) {
    const previous = query[key];
    if (previous === undefined) query[key] = value;
    else if (Array.isArray(previous)) previous.push(value);
    else query[key] = [previous, value];
  }
  return query;
}

/**
 * A query parameter given at most once. Repeating it is a 400 rather than a
 * silent pick of one value; an empty value counts as absent.
 */
export const singleQueryParam = () =>
  v.optional(
    v.pipe(
      v.union([v.string(), v.array(v.string())], "must be a string"),
      v.check((value) => !Array.isArray(value), "must be given once"),
      v.transform((value) => (value === "" ? undefined : (value as string))),
    ),
  );
