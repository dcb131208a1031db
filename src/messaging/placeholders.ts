/** `{name}`: a letter or underscore, then letters, digits or underscores. Anything else in braces is plain text. */
const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]{0,63})\}/g;

/** The placeholder names of a text, each once, in order of first appearance. */
export function placeholdersOf(text: string): string[] {
  return [...new Set(Array.from(text.matchAll(PLACEHOLDER), (match) => match[1]!))];
}

/**
 * Fills each `{name}` of a message template that `values` has (own keys
 * only); any other stays as written. One rule for every template a plugin
 * sends: notices, transactional prefixes, appointment texts.
 */
export function fillPlaceholders(text: string, values: Readonly<Record<string, string>>): string {
  return text.replace(PLACEHOLDER, (written, name: string) => (Object.hasOwn(values, name) ? values[name]! : written));
}

/** A template filled for one person: the text, or the placeholders that had no value (nothing is sent then). */
export type FilledTemplate = { text: string; missing?: undefined } | { text?: undefined; missing: string[] };

/**
 * Fills every `{name}` of a marketing template; a placeholder without a value
 * (absent or empty) makes the whole text unusable, so the caller skips the
 * send and records why instead of sending a broken text.
 */
export function fillTemplate(text: string, values: Readonly<Record<string, string | undefined>>): FilledTemplate {
  const missing = placeholdersOf(text).filter((name) => !Object.hasOwn(values, name) || values[name] === undefined || values[name] === "");
  if (missing.length > 0) return { missing };
  return { text: fillPlaceholders(text, values as Readonly<Record<string, string>>) };
}
