import { randomBytes } from "node:crypto";
import { safeEqual, sign, type RequestContext } from "../../src/index.ts";
import { parseCookies, serializeCookie } from "./cookies.ts";

/** What a page needs to show a form: the token for its hidden field, and the cookie to set when the browser has none yet. */
export interface IssuedCsrf {
  token: string;
  setCookie?: string;
}

const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

/**
 * CSRF protection of forms a browser posts before anyone signs in (and on the
 * install page after): a random cookie, HttpOnly and SameSite, and in each form
 * the HMAC of that cookie under the kit secret. A forged post from another
 * site has neither the cookie nor a token that matches it.
 */
export class FormCsrf {
  constructor(
    private readonly secret: string,
    /** Names what the tokens are for, so a token of one form set is refused by another. */
    private readonly purpose: string,
    private readonly cookie: { name: string; path: string; secure: boolean },
  ) {}

  /** The token for the request's cookie, or a new cookie with its token. */
  issue(context: RequestContext): IssuedCsrf {
    const existing = parseCookies(context.headers.cookie).get(this.cookie.name);
    if (existing && COOKIE_VALUE.test(existing)) return { token: this.#tokenOf(existing) };
    const value = randomBytes(32).toString("base64url");
    return { token: this.#tokenOf(value), setCookie: serializeCookie(this.cookie.name, value, { path: this.cookie.path, secure: this.cookie.secure }) };
  }

  /** Whether the posted token matches the request's cookie. */
  valid(context: RequestContext, token: string | undefined): boolean {
    const cookie = parseCookies(context.headers.cookie).get(this.cookie.name);
    return cookie !== undefined && token !== undefined && safeEqual(this.#tokenOf(cookie), token);
  }

  #tokenOf(cookie: string): string {
    return sign(this.secret, this.purpose, cookie);
  }
}
