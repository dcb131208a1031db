import {
  CLOCK,
  conflict,
  HttpError,
  inject,
  injectable,
  JOBS,
  LOGGER,
  notFound,
  sortableId,
  STORAGE,
  type Clock,
  type Collection,
  type CredentialKind,
  type Jobs,
  type Logger,
  type Storage,
} from "../../src/index.ts";
import { PRUNE_JOB, PRUNE_KEY, WEBHOOKS, type WebhookRecord } from "./records.ts";
import { parseWebhookInput, parseWebhookPatch } from "./schemas.ts";
import { WEBHOOK_SIGNING_KEYS, WEBHOOKS_SETTINGS, type WebhooksSettings } from "./tokens.ts";
import type { SigningKeys } from "./signing-keys.ts";

/** Whose webhooks: the company of the token and the application it belongs to. */
export interface WebhookOwner {
  companyId: string;
  applicationId: string;
}

/**
 * Webhooks by owner. A webhook belongs to one application at one company: an
 * OAuth application installed by two companies has separate webhooks at each,
 * and neither company (nor another application) sees or changes the other's.
 */
@injectable()
export class WebhookRegistry {
  private readonly webhooks: Collection<WebhookRecord>;
  /** Webhooks read for deliveries, by id: every delivery reads its webhook (see `forDelivery`). */
  private readonly recent = new Map<string, { webhook: WebhookRecord | undefined; until: number }>();
  /** The enabled webhooks of companies, kept while this process is alone on its storage (see `enabledOf`). */
  readonly #enabled = new Map<string, readonly WebhookRecord[]>();
  /** Moves on at every write to webhooks: a read that began before one is not kept. */
  #writes = 0;

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(LOGGER) private readonly logger: Logger,
    @inject(WEBHOOKS_SETTINGS) private readonly settings: WebhooksSettings,
    @inject(WEBHOOK_SIGNING_KEYS) private readonly signingKeys: SigningKeys,
    @inject(JOBS) private readonly jobs: Jobs,
  ) {
    this.webhooks = storage.collection(WEBHOOKS);
  }

  /** The owner's webhooks, oldest first. */
  async list(owner: WebhookOwner): Promise<WebhookRecord[]> {
    return (await this.webhooks.find({ where: { companyId: owner.companyId, applicationId: owner.applicationId }, orderBy: [{ field: "id" }] })).items;
  }

  /** Every webhook of a company, whatever its application (the CLI). */
  async ofCompany(companyId: string): Promise<WebhookRecord[]> {
    return (await this.webhooks.find({ where: { companyId }, orderBy: [{ field: "id" }] })).items;
  }

  /**
   * The enabled webhooks of a company: where its events go (their url, events and application; their
   * failing state may be older). Every event reads them, inside its transaction: a process alone on
   * its storage, with one transaction at a time, keeps them, and every write to webhooks (all go
   * through this registry: the API, the console, a drain disabling one) forgets them, before it and
   * once it has ended. With other processes (`Jobs.sharesStorage`), or transactions side by side, they
   * are read each time: a webhook another process created gets the very next event.
   */
  async enabledOf(companyId: string): Promise<readonly WebhookRecord[]> {
    const keep = !this.jobs.sharesStorage && !this.storage.transactionsRunConcurrently;
    const kept = keep ? this.#enabled.get(companyId) : undefined;
    if (kept) return kept;
    const writes = this.#writes;
    const webhooks = (await this.webhooks.find({ where: { companyId, disabledAt: null } })).items;
    if (keep && writes === this.#writes) {
      if (this.#enabled.size >= CACHE_SIZE) this.#enabled.clear();
      this.#enabled.set(companyId, webhooks);
    }
    return webhooks;
  }

  /** Runs a write to webhooks, forgetting what `enabledOf` kept before it and once it has ended (committed or not). */
  async #writing<R>(write: () => Promise<R>): Promise<R> {
    this.#forgetEnabled();
    try {
      return await write();
    } finally {
      this.#forgetEnabled();
    }
  }

  #forgetEnabled(): void {
    this.#writes++;
    this.#enabled.clear();
  }

  get(id: string): Promise<WebhookRecord | undefined> {
    return this.webhooks.get(id);
  }

  /**
   * The webhook of a delivery, read at most once per CACHE_MS: a change made
   * in this process takes effect at once, one made by another process sharing
   * the database within CACHE_MS.
   */
  async forDelivery(id: string): Promise<WebhookRecord | undefined> {
    const now = this.clock.now();
    const cached = this.recent.get(id);
    if (cached && cached.until > now) return cached.webhook;
    const webhook = await this.webhooks.get(id);
    if (this.recent.size >= CACHE_SIZE) this.recent.clear();
    this.recent.set(id, { webhook, until: now + CACHE_MS });
    return webhook;
  }

  /**
   * Creates a webhook (400 naming the field, 409 for a URL the owner has a
   * webhook for already). Makes the application's signing key if it has none.
   */
  async create(owner: WebhookOwner & { credentialKind: CredentialKind }, body: unknown): Promise<WebhookRecord> {
    const input = parseWebhookInput(body, this.settings.allowPrivateTargets);
    return this.#writing(() => this.storage.transaction(async () => {
      const existing = await this.list(owner);
      if (existing.length >= this.settings.maxWebhooksPerApplication) {
        throw new HttpError(409, "too_many_webhooks", `an application may have at most ${this.settings.maxWebhooksPerApplication} webhooks at a company; delete one first`);
      }
      refuseSameUrl(existing, input.url);
      const now = this.clock.now();
      const record: WebhookRecord = { id: sortableId(now), ...owner, url: input.url, events: input.events, createdAt: now, updatedAt: now };
      await this.webhooks.insert(record);
      await this.signingKeys.ensure(owner.applicationId);
      // The delivery log's daily pruning, from the first webhook on (a key: one job however many webhooks).
      await this.jobs.enqueue({ type: PRUNE_JOB, payload: null, key: PRUNE_KEY, runAt: now + DAY });
      return record;
    }));
  }

  /** Changes any of url, events and disabled (`disabled: false` enables it again). 404 unless the owner's. */
  async update(owner: WebhookOwner, id: string, body: unknown): Promise<WebhookRecord> {
    const patch = parseWebhookPatch(body, this.settings.allowPrivateTargets);
    return this.#writing(() => this.storage.transaction(async () => {
      const current = await this.#owned(owner, id);
      if (patch.url !== undefined) refuseSameUrl((await this.list(owner)).filter((other) => other.id !== id), patch.url);
      const now = this.clock.now();
      const changes: Partial<WebhookRecord> = { updatedAt: now };
      if (patch.url !== undefined) changes.url = patch.url;
      if (patch.events !== undefined) changes.events = patch.events;
      if (patch.disabled === true && current.disabledAt === undefined) Object.assign(changes, { disabledAt: now, disabledReason: "disabled through the API" });
      if (patch.disabled === false) Object.assign(changes, { disabledAt: undefined, disabledReason: undefined, failingSince: undefined });
      this.recent.delete(id);
      return (await this.webhooks.update(id, changes))!;
    }));
  }

  /** 404 unless the owner's. Deliveries still queued for it are cancelled when their turn comes. */
  async delete(owner: WebhookOwner, id: string): Promise<void> {
    await this.#owned(owner, id);
    this.recent.delete(id);
    await this.#writing(() => this.webhooks.delete(id));
  }

  /** Deletes an application's webhooks at a company (the company uninstalled it). */
  async deleteOfInstall(companyId: string, applicationId: string): Promise<number> {
    this.recent.clear();
    return this.#writing(() => this.webhooks.deleteWhere({ companyId, applicationId }));
  }

  /** Disables a webhook and says so in the log. */
  async disable(webhook: WebhookRecord, reason: string): Promise<void> {
    const now = this.clock.now();
    this.recent.delete(webhook.id);
    const disabled = await this.#writing(() => this.webhooks.update(webhook.id, { disabledAt: now, disabledReason: reason, updatedAt: now }, { where: { disabledAt: null } }));
    if (disabled) this.logger.warn("webhook disabled", { webhookId: webhook.id, companyId: webhook.companyId, applicationId: webhook.applicationId, url: webhook.url, reason });
  }

  /** An attempt failed: remembers since when it has been failing. */
  async failing(webhook: WebhookRecord, since: number): Promise<void> {
    if (webhook.failingSince !== undefined) return;
    this.recent.delete(webhook.id);
    await this.webhooks.update(webhook.id, { failingSince: since }, { where: { failingSince: null } });
  }

  /** An attempt delivered: the webhook is failing no more. */
  async delivered(webhook: WebhookRecord): Promise<void> {
    if (webhook.failingSince === undefined) return;
    this.recent.delete(webhook.id);
    await this.webhooks.update(webhook.id, { failingSince: undefined });
  }

  async #owned(owner: WebhookOwner, id: string): Promise<WebhookRecord> {
    const webhook = await this.webhooks.get(id);
    if (!webhook || webhook.companyId !== owner.companyId || webhook.applicationId !== owner.applicationId) throw notFound(`no webhook ${id}`);
    return webhook;
  }
}

const DAY = 24 * 3_600_000;
/** How long a webhook read for deliveries is used again; a bound on the memory it takes. */
const CACHE_MS = 5_000;
const CACHE_SIZE = 10_000;

function refuseSameUrl(webhooks: readonly WebhookRecord[], url: string): void {
  const same = webhooks.find((webhook) => webhook.url === url);
  if (same) throw conflict(`webhook ${same.id} has this url already: change its events with PUT /v1/webhooks/${same.id}`);
}
