import { randomBytes } from "node:crypto";
import {
  CLOCK,
  generateSecret,
  hashSecret,
  inject,
  injectable,
  safeEqual,
  STORAGE,
  type Clock,
  type Collection,
  type Scope,
  type Storage,
} from "../../src/index.ts";
import { ACCOUNTS_SERVICE, type AccountsService, type ApplicationRecord } from "../accounts/index.ts";
import { OAUTH_CLIENTS, type OAuthClientRecord } from "./records.ts";

/** A public application as its owner sees it: never the secret hash. */
export interface PublicApplication {
  applicationId: string;
  /** The owning company. */
  companyId: string;
  name: string;
  clientId: string;
  redirectUris: string[];
  /** The scopes an install may ask for. */
  scopes: Scope[];
  createdAt: number;
}

/** A client and its application, as the install page and the token exchange need them. */
export interface ResolvedClient {
  client: OAuthClientRecord;
  application: ApplicationRecord;
}

export const MAX_REDIRECT_URIS = 20;
const MAX_REDIRECT_URI_LENGTH = 2048;
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * Checks a redirect URI at registration: absolute, no fragment, https (plain
 * http only on the loopback, for development). Returns it unchanged: matching is exact.
 */
export function checkRedirectUri(uri: string): string {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new Error(`redirect URI "${uri}" is not an absolute URL`);
  }
  if (uri.length > MAX_REDIRECT_URI_LENGTH) throw new Error(`a redirect URI has at most ${MAX_REDIRECT_URI_LENGTH} characters`);
  if (url.hash || uri.includes("#")) throw new Error(`redirect URI "${uri}" must not have a fragment`);
  const loopback = url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol !== "https:" && !loopback) throw new Error(`redirect URI "${uri}" must use https (http only on localhost)`);
  return uri;
}

/** Public applications: an accounts application of kind "public" plus its OAuth client. */
@injectable()
export class OAuthClients {
  readonly #clients: Collection<OAuthClientRecord>;

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(ACCOUNTS_SERVICE) private readonly accounts: AccountsService,
  ) {
    this.#clients = storage.collection(OAUTH_CLIENTS);
  }

  /** Registers a public application; the client secret is returned once. */
  async create(input: {
    companyId: string;
    name: string;
    redirectUris: readonly string[];
    scopes: readonly Scope[];
  }): Promise<{ application: PublicApplication; clientSecret: string }> {
    const name = input.name.trim();
    if (!name) throw new Error("a public application needs a name");
    const redirectUris = [...new Set(input.redirectUris.map(checkRedirectUri))];
    if (redirectUris.length === 0) throw new Error("a public application needs at least one redirect URI");
    if (redirectUris.length > MAX_REDIRECT_URIS) throw new Error(`a public application has at most ${MAX_REDIRECT_URIS} redirect URIs`);
    if (input.scopes.length === 0) throw new Error("a public application needs at least one scope");
    return this.storage.transaction(async () => {
      const application = await this.accounts.createApplication({ companyId: input.companyId, name, scopes: input.scopes, kind: "public" });
      const clientSecret = generateSecret("rk_cs");
      const client = await this.#clients.insert({
        id: application.id,
        companyId: input.companyId,
        clientId: `rk_cid_${randomBytes(16).toString("base64url")}`,
        secretHash: hashSecret(clientSecret),
        redirectUris,
        createdAt: this.clock.now(),
      });
      return { application: toPublic(client, application), clientSecret };
    });
  }

  async list(companyId: string): Promise<PublicApplication[]> {
    const clients = (await this.#clients.find({ where: { companyId }, orderBy: [{ field: "createdAt" }] })).items;
    const listed: PublicApplication[] = [];
    for (const client of clients) {
      const application = await this.accounts.getApplication(client.id);
      if (application) listed.push(toPublic(client, application));
    }
    return listed;
  }

  /** Replaces the client secret; the old one stops working at once. The new one is returned once. */
  async rotateSecret(clientId: string): Promise<{ application: PublicApplication; clientSecret: string }> {
    const resolved = await this.find(clientId);
    if (!resolved) throw new Error(`no public application with client id ${clientId}`);
    const clientSecret = generateSecret("rk_cs");
    const client = await this.#clients.update(resolved.client.id, { secretHash: hashSecret(clientSecret), secretRotatedAt: this.clock.now() });
    if (!client) throw new Error(`no public application with client id ${clientId}`);
    return { application: toPublic(client, resolved.application), clientSecret };
  }

  /** The client and its live application; undefined when unknown or deleted. */
  async find(clientId: string): Promise<ResolvedClient | undefined> {
    const client = await this.#clients.findOne({ clientId });
    const application = client && (await this.accounts.getApplication(client.id));
    return client && application ? { client, application } : undefined;
  }

  /** The client when the secret matches (compared in constant time); undefined otherwise. */
  async authenticate(clientId: string, clientSecret: string): Promise<ResolvedClient | undefined> {
    const resolved = await this.find(clientId);
    return resolved && safeEqual(resolved.client.secretHash, hashSecret(clientSecret)) ? resolved : undefined;
  }
}

function toPublic(client: OAuthClientRecord, application: ApplicationRecord): PublicApplication {
  return {
    applicationId: application.id,
    companyId: client.companyId,
    name: application.name,
    clientId: client.clientId,
    redirectUris: [...client.redirectUris],
    scopes: [...application.scopes],
    createdAt: client.createdAt,
  };
}
