import { randomUUID } from "node:crypto";
import { CLOCK, generateSecret, hashSecret, inject, injectable, STORAGE, type Clock, type Collection, type Storage } from "../../src/index.ts";
import type { DashboardUser } from "./dashboard-users.ts";
import type { OAuthSettings } from "./oauth-plugin.ts";
import { LOGIN_SESSIONS, type LoginSessionRecord } from "./records.ts";
import { OAUTH_SETTINGS } from "./tokens.ts";

/** How long a sign-in lasts unless configured otherwise: a working day. */
export const DEFAULT_SESSION_TTL_MS = 8 * 60 * 60 * 1000;

/** Sign-ins of dashboard users. The cookie carries a random token; only its hash is stored. */
@injectable()
export class LoginSessions {
  readonly #sessions: Collection<LoginSessionRecord>;

  /** How long a sign-in lasts. */
  readonly ttlMs: number;

  constructor(
    @inject(STORAGE) storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(OAUTH_SETTINGS) settings: OAuthSettings,
  ) {
    this.#sessions = storage.collection(LOGIN_SESSIONS);
    this.ttlMs = settings.sessionTtlMs;
  }

  /** Starts a session; returns the token for the cookie. Expired sessions are swept on the way. */
  async start(user: DashboardUser): Promise<{ token: string; session: LoginSessionRecord }> {
    const now = this.clock.now();
    await this.#sessions.deleteWhere({ expiresAt: { lte: now } });
    const token = generateSecret("rk_ses");
    const session = await this.#sessions.insert({
      id: randomUUID(),
      tokenHash: hashSecret(token),
      userId: user.id,
      companyId: user.companyId,
      createdAt: now,
      expiresAt: now + this.ttlMs,
    });
    return { token, session };
  }

  /** Ends the session of a cookie token (signing out); false when there was none. */
  async end(token: string | undefined): Promise<boolean> {
    if (!token) return false;
    return (await this.#sessions.deleteWhere({ tokenHash: hashSecret(token) })) > 0;
  }

  /** The live session of a cookie token, if any. */
  async find(token: string | undefined): Promise<LoginSessionRecord | undefined> {
    if (!token) return undefined;
    const session = await this.#sessions.findOne({ tokenHash: hashSecret(token) });
    return session && session.expiresAt > this.clock.now() ? session : undefined;
  }
}
