import type { JsonValue } from "../../src/ports/storage.ts";

/** `{macroName}`: a letter or underscore, then letters, digits or underscores. Anything else in braces is plain text. */
const MACRO = /\{([A-Za-z_][A-Za-z0-9_]{0,63})\}/g;

/** The macro names of a text, each once, in order of first appearance. */
export function macrosOf(text: string): string[] {
  return [...new Set(Array.from(text.matchAll(MACRO), (match) => match[1]!))];
}

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

/** The macros of `macros` that are not among the `available` names. */
export function missingMacros(macros: readonly string[], available: ReadonlySet<string>): string[] {
  return macros.filter((name) => !available.has(name));
}

/** Replaces every macro with its value; a macro without one stays as written (callers check {@link missingMacros} first). */
export function renderMacros(text: string, values: MacroValues): string {
  return text.replace(MACRO, (written, name: string) => (Object.hasOwn(values, name) ? values[name]! : written));
}
