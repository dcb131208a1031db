/**
 * A typed injection token. At run time it is a plain `symbol`, so it can be
 * passed to tsyringe's `@inject(...)` directly; the phantom type parameter lets
 * `resolve(token)` return the right type.
 */
export type Token<T> = symbol & { readonly __tokenType?: T };

interface TokenInfo {
  readonly name: string;
  /** Package paths of the first-party modules that can provide this token. */
  readonly providers: readonly string[];
}

const tokenInfo = new Map<symbol, TokenInfo>();

/**
 * Declares a token. `providers` lists where a user finds an implementation; it
 * is quoted in the boot error when a plugin needs the token and nobody bound it.
 */
export function defineToken<T>(name: string, providers: readonly string[] = []): Token<T> {
  const token = Symbol(name) as Token<T>;
  tokenInfo.set(token, { name, providers });
  return token;
}

export function describeToken(token: symbol): TokenInfo {
  return tokenInfo.get(token) ?? { name: token.description ?? "anonymous token", providers: [] };
}
