import { randomUUID } from "node:crypto";
import { CLOCK, EVENTS, inject, injectable, STORAGE, type Clock, type Collection, type EventBus, type Scope, type Storage } from "../../src/index.ts";
import { ACCOUNTS_SERVICE, type AccountsService } from "../accounts/index.ts";
import { INSTALLATIONS, type InstallationRecord } from "./records.ts";

declare module "../../src/events/event-bus.ts" {
  interface ReachkitEvents {
    /** A company installed a public application (or installed it again, replacing its token). */
    "oauth.installed": { companyId: string; applicationId: string; scopes: Scope[] };
    /** A company's install of a public application ended: its token no longer works. */
    "oauth.uninstalled": { companyId: string; applicationId: string };
  }
}

/**
 * Which company installed which public application, and the one access token
 * each install holds: installing again replaces the token, uninstalling revokes it.
 */
@injectable()
export class Installations {
  readonly #installations: Collection<InstallationRecord>;

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(ACCOUNTS_SERVICE) private readonly accounts: AccountsService,
    @inject(EVENTS) private readonly events: EventBus,
  ) {
    this.#installations = storage.collection(INSTALLATIONS);
  }

  /** Issues the install's access token, revoking the one it had. Returns the token (shown once) and its credential id. */
  async install(input: { companyId: string; applicationId: string; scopes: Scope[]; userId: string }): Promise<{ token: string; credentialId: string }> {
    const result = await this.storage.transaction(async () => {
      const previous = await this.#installations.findOne({ companyId: input.companyId, applicationId: input.applicationId });
      if (previous) await this.accounts.revokeCredential(previous.credentialId);
      const issued = await this.accounts.issueCredential({
        companyId: input.companyId,
        kind: "oauth",
        applicationId: input.applicationId,
        scopes: input.scopes,
        label: "OAuth access token",
      });
      const record: InstallationRecord = {
        id: previous?.id ?? randomUUID(),
        companyId: input.companyId,
        applicationId: input.applicationId,
        credentialId: issued.credential.id,
        scopes: [...input.scopes],
        installedBy: input.userId,
        installedAt: this.clock.now(),
      };
      await this.#installations.upsert(record);
      return { token: issued.token, credentialId: issued.credential.id };
    });
    void this.events.emit("oauth.installed", { companyId: input.companyId, applicationId: input.applicationId, scopes: [...input.scopes] });
    return result;
  }

  /** Ends an install and revokes its token; false when the company has not installed the application. */
  async uninstall(companyId: string, applicationId: string): Promise<boolean> {
    const removed = await this.storage.transaction(async () => {
      const installation = await this.#installations.findOne({ companyId, applicationId });
      if (!installation) return false;
      await this.accounts.revokeCredential(installation.credentialId);
      return this.#installations.delete(installation.id);
    });
    if (removed) void this.events.emit("oauth.uninstalled", { companyId, applicationId });
    return removed;
  }

  /** Revokes a token issued for an install; the install ends if the token is still its current one. */
  async revokeToken(credentialId: string): Promise<void> {
    const ended = await this.storage.transaction(async () => {
      await this.accounts.revokeCredential(credentialId);
      const installation = await this.#installations.findOne({ credentialId });
      if (installation) await this.#installations.delete(installation.id);
      return installation;
    });
    if (ended) void this.events.emit("oauth.uninstalled", { companyId: ended.companyId, applicationId: ended.applicationId });
  }

  /** The applications a company has installed. */
  async list(companyId: string): Promise<InstallationRecord[]> {
    return (await this.#installations.find({ where: { companyId }, orderBy: [{ field: "installedAt" }] })).items;
  }
}
