import { randomUUID } from "node:crypto";
import {
  CLOCK,
  generateSecret,
  hashSecret,
  inject,
  injectable,
  safeEqual,
  SCOPES,
  STORAGE,
  UniqueConstraintError,
  type Accounts,
  type Clock,
  type Collection,
  type Company,
  type CredentialKind,
  type Principal,
  type Scope,
  type Storage,
} from "../../src/index.ts";
import {
  APPLICATIONS,
  COMPANIES,
  CREDENTIALS,
  type ApplicationKind,
  type ApplicationRecord,
  type CompanyRecord,
  type CredentialRecord,
  type CredentialView,
} from "./records.ts";

const TOKEN_PREFIX: Record<CredentialKind, string> = { api_key: "rk_key", oauth: "rk_oat", legacy: "rk_leg" };

export interface IssuedCredential {
  credential: CredentialView;
  /** The bearer token: shown once, never stored. */
  token: string;
}

/**
 * Tenants, applications and credentials. Deleting a company or an application
 * revokes its credentials, so verifying a token is one indexed lookup.
 */
@injectable()
export class AccountsService implements Accounts {
  // TypeScript-private, not #private: in a decorated class esbuild (tsx) turns #fields into WeakMap
  // lookups, two per access, and authenticate() runs on every request.
  private readonly companies: Collection<CompanyRecord>;
  private readonly applications: Collection<ApplicationRecord>;
  private readonly credentials: Collection<CredentialRecord>;

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
  ) {
    this.companies = storage.collection(COMPANIES);
    this.applications = storage.collection(APPLICATIONS);
    this.credentials = storage.collection(CREDENTIALS);
  }

  async authenticate(token: string): Promise<Principal | undefined> {
    const tokenHash = hashSecret(token);
    const credential = await this.credentials.findOne({ tokenHash });
    if (!credential || credential.revokedAt !== undefined || !safeEqual(credential.tokenHash, tokenHash)) return undefined;
    return {
      credentialId: credential.id,
      companyId: credential.companyId,
      applicationId: credential.applicationId,
      kind: credential.kind,
      scopes: new Set(credential.scopes),
    };
  }

  async createCompany(input: { name: string; domain?: string; contactEmail?: string }): Promise<Company> {
    const name = input.name.trim();
    if (!name) throw new Error("a company needs a name");
    const base = slugify(input.domain ?? name);
    for (let attempt = 1; ; attempt++) {
      const company: CompanyRecord = {
        id: randomUUID(),
        name,
        domain: attempt === 1 ? base : `${base}-${attempt}`,
        contactEmail: input.contactEmail ?? "",
        createdAt: this.clock.now(),
      };
      try {
        return await this.companies.insert(company);
      } catch (error) {
        // An explicit domain must be free; a derived one gets a numeric suffix.
        if (!(error instanceof UniqueConstraintError) || input.domain !== undefined || attempt >= 1000) throw error;
      }
    }
  }

  async getCompany(id: string): Promise<Company | undefined> {
    const company = await this.companies.get(id);
    return company?.deletedAt === undefined ? company : undefined;
  }

  async updateCompany(id: string, patch: Partial<Pick<Company, "name" | "domain" | "contactEmail" | "senderNumber">>): Promise<Company> {
    const updated = await this.companies.update(id, patch, { where: { deletedAt: null } });
    if (!updated) throw new Error(`no company ${id}`);
    return updated;
  }

  async listCompanies(): Promise<Company[]> {
    return (await this.companies.find({ where: { deletedAt: null }, orderBy: [{ field: "createdAt" }] })).items;
  }

  /**
   * Soft-deletes a company, its applications, and revokes every credential it
   * has, including the OAuth tokens other companies hold for its public applications.
   */
  async deleteCompany(id: string): Promise<boolean> {
    const now = this.clock.now();
    return this.storage.transaction(async () => {
      const deleted = await this.companies.update(id, { deletedAt: now }, { where: { deletedAt: null } });
      if (!deleted) return false;
      await this.credentials.updateWhere({ companyId: id, revokedAt: null }, { revokedAt: now });
      const applications = await this.listApplications(id);
      if (applications.length > 0) {
        const applicationIds = applications.map((application) => application.id);
        await this.applications.updateWhere({ id: { in: applicationIds } }, { deletedAt: now });
        await this.credentials.updateWhere({ applicationId: { in: applicationIds }, revokedAt: null }, { revokedAt: now });
      }
      return true;
    });
  }

  async createApplication(input: { companyId: string; name: string; scopes: readonly Scope[]; kind?: ApplicationKind }): Promise<ApplicationRecord> {
    if (!(await this.getCompany(input.companyId))) throw new Error(`no company ${input.companyId}`);
    return this.applications.insert({
      id: randomUUID(),
      companyId: input.companyId,
      name: input.name,
      kind: input.kind ?? "private",
      scopes: [...new Set(input.scopes)],
      createdAt: this.clock.now(),
    });
  }

  async getApplication(id: string): Promise<ApplicationRecord | undefined> {
    const application = await this.applications.get(id);
    return application?.deletedAt === undefined ? application : undefined;
  }

  async listApplications(companyId: string): Promise<ApplicationRecord[]> {
    const page = await this.applications.find({ where: { companyId, deletedAt: null }, orderBy: [{ field: "createdAt" }] });
    return page.items;
  }

  /** Deletes an application and revokes its credentials. */
  async deleteApplication(id: string): Promise<boolean> {
    const now = this.clock.now();
    return this.storage.transaction(async () => {
      const deleted = await this.applications.update(id, { deletedAt: now }, { where: { deletedAt: null } });
      if (!deleted) return false;
      await this.credentials.updateWhere({ applicationId: id, revokedAt: null }, { revokedAt: now });
      return true;
    });
  }

  /**
   * Issues a bearer token. API keys and OAuth tokens belong to an application
   * and carry its scopes unless others are given; legacy tokens carry none.
   */
  async issueCredential(input: {
    companyId: string;
    kind: CredentialKind;
    applicationId?: string;
    scopes?: readonly Scope[];
    label?: string;
  }): Promise<IssuedCredential> {
    if (!(await this.getCompany(input.companyId))) throw new Error(`no company ${input.companyId}`);
    let scopes: Scope[] = [];
    if (input.kind !== "legacy") {
      const application = input.applicationId ? await this.getApplication(input.applicationId) : undefined;
      // An OAuth token of a public application belongs to the company that installed it, not to the owner.
      const installable = input.kind === "oauth" && application?.kind === "public";
      if (!application || (application.companyId !== input.companyId && !installable)) {
        throw new Error("a v1 token needs an application of the same company, or an OAuth token a public application");
      }
      scopes = [...(input.scopes ?? application.scopes)];
    }
    const token = generateSecret(TOKEN_PREFIX[input.kind]);
    const credential = await this.credentials.insert({
      id: randomUUID(),
      companyId: input.companyId,
      ...(input.kind !== "legacy" ? { applicationId: input.applicationId } : {}),
      kind: input.kind,
      tokenHash: hashSecret(token),
      hint: token.slice(-4),
      label: input.label ?? (input.kind === "legacy" ? "legacy token" : input.kind === "oauth" ? "OAuth access token" : "API key"),
      scopes,
      createdAt: this.clock.now(),
    });
    return { credential: toView(credential), token };
  }

  /** Revokes one credential; false when unknown or already revoked. */
  async revokeCredential(id: string): Promise<boolean> {
    return (await this.credentials.update(id, { revokedAt: this.clock.now() }, { where: { revokedAt: null } })) !== undefined;
  }

  async listCredentials(companyId: string): Promise<CredentialView[]> {
    const page = await this.credentials.find({ where: { companyId }, orderBy: [{ field: "createdAt" }] });
    return page.items.map(toView);
  }

  /** Sets up a new company for `reachkit init`: a private application with every scope, its API key, and a legacy token. */
  async provision(company: Company): Promise<{ apiKey: string; legacyToken: string }> {
    const application = await this.createApplication({ companyId: company.id, name: "Default application", scopes: SCOPES });
    const apiKey = await this.issueCredential({ companyId: company.id, kind: "api_key", applicationId: application.id });
    const legacy = await this.issueCredential({ companyId: company.id, kind: "legacy" });
    return { apiKey: apiKey.token, legacyToken: legacy.token };
  }
}

function toView({ tokenHash: _hash, ...view }: CredentialRecord): CredentialView {
  return view;
}

function slugify(text: string): string {
  const slug = text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60);
  return slug || "company";
}
