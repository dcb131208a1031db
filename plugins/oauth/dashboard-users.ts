import { randomUUID } from "node:crypto";
import {
  ACCOUNTS,
  CLOCK,
  inject,
  injectable,
  STORAGE,
  UniqueConstraintError,
  type Accounts,
  type Clock,
  type Collection,
  type Storage,
} from "../../src/index.ts";
import type { OAuthSettings } from "./oauth-plugin.ts";
import type { PasswordHasher } from "./passwords.ts";
import { DASHBOARD_ROLES, DASHBOARD_USERS, LOGIN_SESSIONS, type DashboardRole, type DashboardUserRecord, type LoginSessionRecord } from "./records.ts";
import { OAUTH_SETTINGS } from "./tokens.ts";

/** A dashboard user as listed: never the password hash. */
export type DashboardUser = Omit<DashboardUserRecord, "passwordHash">;

/** A change that would leave a company without an owner, who alone can manage its users. */
export class LastOwnerError extends Error {
  constructor() {
    super("a company keeps at least one owner: make another user an owner first");
    this.name = "LastOwnerError";
  }
}

/** A password shorter than this is refused when a user is created. */
export const MIN_PASSWORD_LENGTH = 10;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

export const isDashboardRole = (value: unknown): value is DashboardRole => DASHBOARD_ROLES.includes(value as DashboardRole);

/**
 * The people who sign in to the install page and the console, each for one company. Checking a
 * sign-in costs one password hash whether the email exists or not, so the answer
 * time tells nothing about which emails are registered.
 */
@injectable()
export class DashboardUsers {
  readonly #users: Collection<DashboardUserRecord>;
  readonly #sessions: Collection<LoginSessionRecord>;
  /** A hash of a random password, checked when the email is unknown. */
  #decoy: Promise<string> | undefined;

  private readonly passwords: PasswordHasher;

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(ACCOUNTS) private readonly accounts: Accounts,
    @inject(OAUTH_SETTINGS) settings: OAuthSettings,
  ) {
    this.#users = storage.collection(DASHBOARD_USERS);
    this.#sessions = storage.collection(LOGIN_SESSIONS);
    this.passwords = settings.passwordHasher;
  }

  /** A new user, an owner unless `role` says otherwise. */
  async create(input: { companyId: string; email: string; password: string; role?: DashboardRole }): Promise<DashboardUser> {
    const email = normalizeEmail(input.email);
    const role = input.role ?? "owner";
    if (!EMAIL.test(email)) throw new Error(`"${input.email}" is not an email address`);
    if (!isDashboardRole(role)) throw new Error(`a role is one of ${DASHBOARD_ROLES.join(", ")}`);
    if (input.password.length < MIN_PASSWORD_LENGTH) throw new Error(`a password needs at least ${MIN_PASSWORD_LENGTH} characters`);
    if (!(await this.accounts.getCompany(input.companyId))) throw new Error(`no company ${input.companyId}`);
    const record: DashboardUserRecord = {
      id: randomUUID(),
      companyId: input.companyId,
      email,
      role,
      passwordHash: await this.passwords.hash(input.password),
      createdAt: this.clock.now(),
    };
    try {
      await this.#users.insert(record);
    } catch (error) {
      if (error instanceof UniqueConstraintError) throw new Error(`a dashboard user with the email ${email} exists`);
      throw error;
    }
    return toView(record);
  }

  async get(id: string): Promise<DashboardUser | undefined> {
    const user = await this.#users.get(id);
    return user && toView(user);
  }

  async list(companyId: string): Promise<DashboardUser[]> {
    return (await this.#users.find({ where: { companyId }, orderBy: [{ field: "createdAt" }] })).items.map(toView);
  }

  /** The user, only if they belong to the company. */
  async getOf(companyId: string, id: string): Promise<DashboardUser | undefined> {
    const user = await this.get(id);
    return user?.companyId === companyId ? user : undefined;
  }

  /** Deletes a user and signs them out everywhere. */
  async delete(id: string): Promise<boolean> {
    await this.#sessions.deleteWhere({ userId: id });
    return this.#users.delete(id);
  }

  /**
   * Deletes a user of the company and signs them out everywhere; false when the
   * company has no such user. Refuses (LastOwnerError) to delete its last owner.
   */
  async deleteOf(companyId: string, id: string): Promise<boolean> {
    return this.storage.transaction(async () => {
      const user = await this.getOf(companyId, id);
      if (!user) return false;
      if (user.role === "owner") await this.#keepAnOwner(companyId);
      return this.delete(id);
    });
  }

  /** Gives a user of the company a role; undefined when it has no such user. Refuses to demote its last owner. */
  async setRole(companyId: string, id: string, role: DashboardRole): Promise<DashboardUser | undefined> {
    if (!isDashboardRole(role)) throw new Error(`a role is one of ${DASHBOARD_ROLES.join(", ")}`);
    return this.storage.transaction(async () => {
      const user = await this.getOf(companyId, id);
      if (!user) return undefined;
      if (user.role === "owner" && role !== "owner") await this.#keepAnOwner(companyId);
      const updated = await this.#users.update(id, { role });
      return updated && toView(updated);
    });
  }

  /**
   * Throws unless the company has another owner besides the one about to go. Counted in turn with the
   * company's other owner changes (lockKey, to the commit): of two owners demoting each other at once, the
   * second counts after the first has committed and is refused.
   */
  async #keepAnOwner(companyId: string): Promise<void> {
    await this.#users.lockKey(`owners:${companyId}`);
    if ((await this.#users.count({ companyId, role: "owner" })) <= 1) throw new LastOwnerError();
  }

  /** The user when the email and password match and the company still exists; undefined otherwise, at the same cost. */
  async checkPassword(email: string, password: string): Promise<DashboardUser | undefined> {
    const user = await this.#users.findOne({ email: normalizeEmail(email) });
    const stored = user?.passwordHash ?? (await (this.#decoy ??= this.passwords.hash(randomUUID())));
    const matches = await this.passwords.verify(password, stored);
    if (!user || !matches || !(await this.accounts.getCompany(user.companyId))) return undefined;
    return toView(user);
  }
}

function toView({ passwordHash: _hash, ...user }: DashboardUserRecord): DashboardUser {
  return user;
}
