import { randomUUID } from "node:crypto";
import { generateSecret, hashSecret, type Clock, type Collection, type Storage } from "../../src/index.ts";
import type { DashboardUser } from "./dashboard-users.ts";
import { LOGIN_SESSIONS, type LoginSessionRecord } from "./records.ts";

/** How long a sign-in lasts unless configured otherwise: a working day. */
export const DEFAULT_SESSION_TTL_MS = 8 * 60 * 60 * 1000;

/** Sign-ins of dashboard users. The cookie carries a random token; only its hash is stored. */
export class LoginSessions {
  readonly #sessions: Collection<LoginSessionRecord>;

  constructor(
    storage: Storage,
    private readonly clock: Clock,
    readonly ttlMs: number,
  ) {
    this.#sessions = storage.collection(LOGIN_SESSIONS);
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

  /** The live session of a cookie token, if any. */
  async find(token: string | undefined): Promise<LoginSessionRecord | undefined> {
    if (!token) return undefined;
    const session = await this.#sessions.findOne({ tokenHash: hashSecret(token) });
    return session && session.expiresAt > this.clock.now() ? session : undefined;
  }
}
