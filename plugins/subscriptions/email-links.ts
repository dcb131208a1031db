import { CLOCK, PUBLIC_URL, SECRET, inject, injectable, safeEqual, sign, type Clock, type PublicUrl } from "../../src/index.ts";
import type { SubscriptionType } from "./sign-up-units.ts";
import type { SubscriptionsPluginOptions } from "./subscriptions-plugin.ts";
import { SUBSCRIPTIONS_SETTINGS } from "./tokens.ts";

export const CONFIRM_EMAIL_PATH = "/email/confirm";
export const UNSUBSCRIBE_EMAIL_PATH = "/email/unsubscribe";

/** `confirm`: opens a pending email subscription; `unsubscribe`: ends one (RFC 8058 one-click). */
export type EmailLinkPurpose = "confirm" | "unsubscribe";

/** What a link speaks for: one email address's subscription of one type at one company. */
export interface EmailLinkClaims {
  purpose: EmailLinkPurpose;
  companyId: string;
  email: string;
  type: SubscriptionType;
  /** Epoch ms after which the link is refused; absent: it never expires (unsubscribe links must keep working). */
  expiresAt?: number;
}

export type EmailLinkCheck = { valid: true; claims: EmailLinkClaims } | { valid: false; problem: "invalid" | "expired"; expiredAt?: number };

export const DEFAULT_EMAIL_CONFIRMATION_TTL_MS = 7 * 24 * 3_600_000;

interface WireClaims {
  p: EmailLinkPurpose;
  c: string;
  e: string;
  t: SubscriptionType;
  x?: number;
}

/**
 * The links in the plugin's emails, pages a person opens, on the `ui` host
 * group (with the install page): `?token=` carries the claims in base64url
 * JSON and their HMAC with the kit secret, so a link names one company,
 * address and type and cannot be changed to name another.
 */
@injectable()
export class EmailLinks {
  constructor(
    @inject(SECRET) private readonly secret: string,
    @inject(PUBLIC_URL) private readonly publicUrl: PublicUrl,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(SUBSCRIPTIONS_SETTINGS) private readonly settings: Required<SubscriptionsPluginOptions>,
  ) {}

  /** The link that confirms a pending email subscription, working for `emailConfirmationTtlMs`. */
  confirmUrl(companyId: string, email: string, type: SubscriptionType): string {
    const expiresAt = this.clock.now() + this.settings.emailConfirmationTtlMs;
    return this.#url(CONFIRM_EMAIL_PATH, { p: "confirm", c: companyId, e: email, t: type, x: expiresAt });
  }

  /** The one-click unsubscribe link of `List-Unsubscribe`; it does not expire. */
  unsubscribeUrl(companyId: string, email: string, type: SubscriptionType): string {
    return this.#url(UNSUBSCRIBE_EMAIL_PATH, { p: "unsubscribe", c: companyId, e: email, t: type });
  }

  /** Checks a link's token for one purpose: its signature, then its expiry. */
  check(token: string | undefined, purpose: EmailLinkPurpose): EmailLinkCheck {
    const [payload, signature, ...rest] = (token ?? "").split(".");
    if (!payload || !signature || rest.length > 0 || !safeEqual(signature, this.#signature(payload))) return { valid: false, problem: "invalid" };
    let wire: WireClaims;
    try {
      wire = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as WireClaims;
    } catch {
      return { valid: false, problem: "invalid" };
    }
    if (wire.p !== purpose) return { valid: false, problem: "invalid" };
    if (wire.x !== undefined && this.clock.now() >= wire.x) return { valid: false, problem: "expired", expiredAt: wire.x };
    return { valid: true, claims: { purpose: wire.p, companyId: wire.c, email: wire.e, type: wire.t, ...(wire.x !== undefined ? { expiresAt: wire.x } : {}) } };
  }

  #url(path: string, claims: WireClaims): string {
    const payload = Buffer.from(JSON.stringify(claims)).toString("base64url");
    return `${this.publicUrl("ui", path)}?token=${payload}.${this.#signature(payload)}`;
  }

  #signature(payload: string): string {
    return sign(this.secret, "email-link", payload);
  }
}
