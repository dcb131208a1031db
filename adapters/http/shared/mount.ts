/** A mount prefix as adapters compare it: "" for none, else a leading "/" and no trailing one (`/reachkit`). */
export function normalizePrefix(prefix: string | undefined): string {
  const trimmed = (prefix ?? "").replace(/\/+$/, "");
  if (trimmed === "") return "";
  return trimmed.startsWith("/") ? trimmed : `/${trimmed}`;
}

/** A URL relative to the prefix (`/reachkit/v1/me?x` → `/v1/me?x`), or undefined when it lies outside. */
export function insidePrefix(url: string, prefix: string): string | undefined {
  if (prefix === "") return url;
  if (!url.startsWith(prefix)) return undefined;
  const rest = url.slice(prefix.length);
  if (rest === "") return "/";
  if (rest.startsWith("/")) return rest;
  return rest.startsWith("?") ? `/${rest}` : undefined;
}

/** The path of a URL without its query string. */
export function pathOf(url: string): string {
  const queryAt = url.indexOf("?");
  return queryAt === -1 ? url : url.slice(0, queryAt);
}
