/** The cookies of a request's `Cookie` header (the first of a repeated name wins). */
export function parseCookies(header: string | readonly string[] | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  const text = Array.isArray(header) ? header.join("; ") : ((header as string | undefined) ?? "");
  for (const pair of text.split(";")) {
    const equals = pair.indexOf("=");
    if (equals === -1) continue;
    const name = pair.slice(0, equals).trim();
    const value = pair.slice(equals + 1).trim();
    if (name && !cookies.has(name)) cookies.set(name, value);
  }
  return cookies;
}

export interface CookieOptions {
  path: string;
  /** Seconds; absent makes a cookie that ends with the browser session. */
  maxAge?: number;
  secure: boolean;
}

/** One `Set-Cookie` value: always HttpOnly and SameSite=Lax (sent on the top-level navigation from the client's site). */
export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  const parts = [`${name}=${value}`, `Path=${options.path}`, "HttpOnly", "SameSite=Lax"];
  if (options.maxAge !== undefined) parts.push(`Max-Age=${options.maxAge}`);
  if (options.secure) parts.push("Secure");
  return parts.join("; ");
}
