/** The Express parameter name that carries a find-my-way wildcard (`*`). */
export const WILDCARD = "reachkit_wildcard";

const RESERVED = new Set(["{", "}", "(", ")", "[", "]", "?", "+", "!", "*", ":", "\\"]);

/**
 * A find-my-way route path in Express 5's syntax (path-to-regexp 8): `:id`
 * stays, a final `*` becomes an optional wildcard, `::` a literal colon, and
 * the characters Express reserves are escaped. Regular-expression parameters
 * have no Express 5 equivalent and are refused by name.
 */
export function expressPath(path: string): string {
  let converted = "";
  for (let i = 0; i < path.length; i++) {
    const char = path[i]!;
    if (char === ":" && path[i + 1] === ":") {
      converted += "\\:";
      i++;
    } else if (char === ":") {
      const name = /^[A-Za-z0-9_$]+/.exec(path.slice(i + 1))?.[0];
      if (!name) throw new Error(`route path ${path}: a parameter needs a name`);
      i += name.length;
      if (path[i + 1] === "(") throw new Error(`route path ${path}: Express 5 has no regular-expression parameters (:${name}(...))`);
      converted += `:${name}`;
    } else if (char === "*") {
      if (i !== path.length - 1) throw new Error(`route path ${path}: a wildcard must end the path`);
      converted += `{*${WILDCARD}}`;
    } else {
      converted += RESERVED.has(char) ? `\\${char}` : char;
    }
  }
  return converted;
}

/** Express's decoded parameters as the core's: the wildcard's segments joined back, under find-my-way's name `*`. */
export function paramsFromExpress(params: Record<string, string | string[] | undefined>): Record<string, string> {
  const converted: Record<string, string> = {};
  for (const [name, value] of Object.entries(params)) {
    if (name === WILDCARD) converted["*"] = Array.isArray(value) ? value.join("/") : (value ?? "");
    else if (typeof value === "string") converted[name] = value;
  }
  return converted;
}
