import { inject, injectable } from "../../src/index.ts";
import { normalizeEmail, type DashboardUser, type DashboardUsers } from "./dashboard-users.ts";
import type { LoginSessions } from "./login-sessions.ts";
import type { LoginThrottle } from "./login-throttle.ts";
import { DASHBOARD_USERS_SERVICE, LOGIN_SESSIONS_SERVICE, LOGIN_THROTTLE } from "./tokens.ts";

/** How a sign-in attempt ended. */
export type SignInOutcome =
  /** Too many failures for this email or address: try again after `retryAfterSeconds`. */
  | { kind: "throttled"; email: string; retryAfterSeconds: number }
  /** The email or password is wrong (which of them is never told). */
  | { kind: "failed"; email: string }
  /** A session started; `token` goes in the cookie. */
  | { kind: "signed_in"; user: DashboardUser; token: string };

/**
 * Dashboard sign-ins, for every page that has a sign-in form (the install
 * page, the console): throttled per email and per address, a session started
 * on success. One place, so both pages count the same failures.
 */
@injectable()
export class SignIns {
  constructor(
    @inject(DASHBOARD_USERS_SERVICE) private readonly users: DashboardUsers,
    @inject(LOGIN_SESSIONS_SERVICE) readonly sessions: LoginSessions,
    @inject(LOGIN_THROTTLE) private readonly throttle: LoginThrottle,
  ) {}

  async attempt(input: { email: string; password: string; address: string }): Promise<SignInOutcome> {
    const email = normalizeEmail(input.email);
    const wait = this.throttle.retryAfterSeconds(email, input.address);
    if (wait > 0) return { kind: "throttled", email, retryAfterSeconds: wait };
    const user = await this.users.checkPassword(email, input.password);
    if (!user) {
      this.throttle.recordFailure(email, input.address);
      return { kind: "failed", email };
    }
    this.throttle.recordSuccess(email);
    const { token } = await this.sessions.start(user);
    return { kind: "signed_in", user, token };
  }

  /** The signed-in user of a live session (their current role), undefined when the session or the user is gone. */
  async signedIn(token: string | undefined): Promise<DashboardUser | undefined> {
    const session = await this.sessions.find(token);
    return session && this.users.get(session.userId);
  }
}

/** The message of a throttled sign-in. */
export function throttledMessage(retryAfterSeconds: number): string {
  const minutes = Math.ceil(retryAfterSeconds / 60);
  return `Too many failed sign-ins. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`;
}
