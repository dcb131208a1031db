import { CLOCK, inject, injectable, type Clock } from "../../src/index.ts";
import type { OAuthSettings } from "./oauth-plugin.ts";
import { OAUTH_SETTINGS } from "./tokens.ts";

export interface LoginThrottleSettings {
  /** Failed sign-ins allowed per email address in a window. */
  maxFailuresPerEmail: number;
  /** Failed sign-ins allowed per client IP address in a window. */
  maxFailuresPerIp: number;
  windowMs: number;
}

export const DEFAULT_LOGIN_THROTTLE: LoginThrottleSettings = {
  maxFailuresPerEmail: 5,
  maxFailuresPerIp: 20,
  windowMs: 15 * 60 * 1000,
};

interface Window {
  start: number;
  failures: number;
}

/**
 * Counts failed sign-ins per email and per IP address in fixed windows, in
 * memory (per process, like the API rate limits). Unknown emails are counted
 * like known ones, so the throttle reveals nothing either.
 */
@injectable()
export class LoginThrottle {
  readonly #windows = new Map<string, Window>();
  private readonly settings: LoginThrottleSettings;

  constructor(
    @inject(CLOCK) private readonly clock: Clock,
    @inject(OAUTH_SETTINGS) settings: OAuthSettings,
  ) {
    this.settings = settings.loginThrottle;
  }

  /** Seconds until a sign-in may be tried again, or 0 when it may be tried now. */
  retryAfterSeconds(email: string, ip: string): number {
    const now = this.clock.now();
    const waits = [this.#wait(`email:${email}`, this.settings.maxFailuresPerEmail, now), this.#wait(`ip:${ip}`, this.settings.maxFailuresPerIp, now)];
    return Math.max(...waits);
  }

  recordFailure(email: string, ip: string): void {
    const now = this.clock.now();
    this.#sweep(now);
    for (const key of [`email:${email}`, `ip:${ip}`]) {
      const window = this.#live(key, now) ?? { start: now, failures: 0 };
      window.failures++;
      this.#windows.set(key, window);
    }
  }

  /** A successful sign-in clears its email's failures (not the address's). */
  recordSuccess(email: string): void {
    this.#windows.delete(`email:${email}`);
  }

  #live(key: string, now: number): Window | undefined {
    const window = this.#windows.get(key);
    return window && now - window.start < this.settings.windowMs ? window : undefined;
  }

  #wait(key: string, max: number, now: number): number {
    const window = this.#live(key, now);
    if (!window || window.failures < max) return 0;
    return Math.max(1, Math.ceil((window.start + this.settings.windowMs - now) / 1000));
  }

  #sweep(now: number): void {
    if (this.#windows.size < 10_000) return;
    for (const [key, window] of this.#windows) if (now - window.start >= this.settings.windowMs) this.#windows.delete(key);
  }
}
