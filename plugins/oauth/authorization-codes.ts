import { randomUUID } from "node:crypto";
import {
  ACCOUNTS,
  CLOCK,
  generateSecret,
  hashSecret,
  inject,
  injectable,
  STORAGE,
  type Accounts,
  type Clock,
  type Collection,
  type Scope,
  type Storage,
} from "../../src/index.ts";
import type { Installations } from "./installations.ts";
import { AUTHORIZATION_CODES, type AuthorizationCodeRecord } from "./records.ts";
import { INSTALLATIONS_SERVICE } from "./tokens.ts";

/** Interface §8: an authorization code expires two minutes after it is issued. */
export const AUTHORIZATION_CODE_TTL_MS = 2 * 60 * 1000;
/** Used and expired codes are kept this long, so that a replayed code still revokes its token. */
export const USED_CODE_RETENTION_MS = 24 * 60 * 60 * 1000;

/** Why an exchange was refused, in RFC 6749 §5.2 words. */
export class OAuthError extends Error {
  constructor(
    readonly error: "invalid_request" | "invalid_client" | "invalid_grant" | "unauthorized_client" | "unsupported_grant_type" | "invalid_scope",
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
    this.name = "OAuthError";
  }
}

/** What a code is bound to: the installing company and user, the client, its redirect URI and the consented scopes. */
export type CodeGrant = Pick<AuthorizationCodeRecord, "companyId" | "applicationId" | "clientId" | "redirectUri" | "scopes" | "userId">;

/** Authorization codes: random, stored hashed, single use, valid for two minutes, bound to everything the user consented to. */
@injectable()
export class AuthorizationCodes {
  readonly #codes: Collection<AuthorizationCodeRecord>;

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(ACCOUNTS) private readonly accounts: Accounts,
    @inject(INSTALLATIONS_SERVICE) private readonly installations: Installations,
  ) {
    this.#codes = storage.collection(AUTHORIZATION_CODES);
  }

  /** Issues a code for a consent; old codes past their retention are swept on the way. */
  async issue(grant: CodeGrant): Promise<string> {
    const now = this.clock.now();
    await this.#codes.deleteWhere({ expiresAt: { lt: now - USED_CODE_RETENTION_MS } });
    const code = generateSecret("rk_code");
    await this.#codes.insert({
      id: randomUUID(),
      codeHash: hashSecret(code),
      ...grant,
      scopes: [...grant.scopes],
      createdAt: now,
      expiresAt: now + AUTHORIZATION_CODE_TTL_MS,
    });
    return code;
  }

  /**
   * Trades a code for the install's access token. The client is already
   * authenticated. A code presented a second time is refused and the token
   * issued for it is revoked (RFC 6749 §4.1.2).
   */
  async redeem(input: { code: string; clientId: string; redirectUri: string; allowedScopes: readonly Scope[] }): Promise<{ token: string; grant: CodeGrant }> {
    const outcome = await this.storage.transaction(async () => {
      const record = await this.#codes.findOne({ codeHash: hashSecret(input.code) });
      if (!record || record.clientId !== input.clientId) return new OAuthError("invalid_grant", "unknown authorization code");
      if (record.usedAt !== undefined) return this.#refuseReuse(record);
      if (record.redirectUri !== input.redirectUri) return new OAuthError("invalid_grant", "redirect_uri differs from the one the code was issued for");
      if (this.clock.now() >= record.expiresAt) return new OAuthError("invalid_grant", "authorization code expired");
      if (!(await this.accounts.getCompany(record.companyId))) return new OAuthError("invalid_grant", "the installing company no longer exists");
      // Claimed before the token is issued: a redemption of the same code at the same time (transactions run
      // side by side on PostgreSQL) waits here for this one to commit, then finds the code used.
      if (!(await this.#codes.update(record.id, { usedAt: this.clock.now() }, { where: { usedAt: null } }))) {
        return this.#refuseReuse((await this.#codes.get(record.id)) ?? record);
      }
      const { companyId, applicationId, clientId, redirectUri, userId } = record;
      const scopes = record.scopes.filter((scope) => input.allowedScopes.includes(scope));
      const grant: CodeGrant = { companyId, applicationId, clientId, redirectUri, scopes, userId };
      const { token, credentialId } = await this.installations.install(grant);
      await this.#codes.update(record.id, { credentialId });
      return { token, grant };
    });
    if (outcome instanceof OAuthError) throw outcome;
    return outcome;
  }

  /** A code presented again: the token issued for it is revoked. */
  async #refuseReuse(record: AuthorizationCodeRecord): Promise<OAuthError> {
    if (record.credentialId) await this.installations.revokeToken(record.credentialId);
    return new OAuthError("invalid_grant", "authorization code already used; the token issued with it is revoked");
  }
}
