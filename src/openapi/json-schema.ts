import { toJsonSchema, type JsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";

/**
 * A valibot schema as the JSON Schema of OpenAPI 3.1 (draft 2020-12). Checks
 * JSON Schema cannot say (custom checks, transformations) are left out: the
 * document describes the shapes, the route's schema stays the judge.
 */
export function jsonSchemaOf(schema: v.GenericSchema): JsonSchema {
  const { $schema: _dialect, ...rest } = toJsonSchema(schema, { target: "draft-2020-12", typeMode: "ignore", errorMode: "ignore" });
  return withoutEmptyRequired(rest);
}

/** Whether a schema takes no value at all (an optional body, or a query string with no parameter). */
export function acceptsNothing(schema: v.GenericSchema): boolean {
  return v.safeParse(schema, undefined).success;
}

/** `required: []` is what the converter writes for an object without required keys; readers expect no key. */
function withoutEmptyRequired(schema: JsonSchema): JsonSchema {
  if (Array.isArray(schema)) return schema.map((item) => withoutEmptyRequired(item as JsonSchema)) as unknown as JsonSchema;
  if (typeof schema !== "object" || schema === null) return schema;
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "required" && Array.isArray(value) && value.length === 0) continue;
    result[key] = typeof value === "object" && value !== null ? withoutEmptyRequired(value as JsonSchema) : value;
  }
  return result as JsonSchema;
}
