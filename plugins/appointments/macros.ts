import { placeholdersOf, type JsonValue } from "../../src/index.ts";

/** The macro names of a text (`{name}`), each once, in order of first appearance. */
export const macrosOf = placeholdersOf;

/** Values that fill macros: strings as they are, numbers and booleans as text. */
export type MacroValues = Readonly<Record<string, string>>;

/** The metadata entries that can fill a macro (objects, lists and null cannot). */
export function macroValuesOf(metadata: Readonly<Record<string, JsonValue>>): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(metadata)) {
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") values[name] = String(value);
  }
  return values;
}

/** The macros of `macros` that are not among the `available` names (texts are filled with `fillPlaceholders`). */
export function missingMacros(macros: readonly string[], available: ReadonlySet<string>): string[] {
  return macros.filter((name) => !available.has(name));
}
