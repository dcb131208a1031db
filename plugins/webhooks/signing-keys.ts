import { CLOCK, inject, injectable, sortableId, STORAGE, type Clock, type Collection, type Storage } from "../../src/index.ts";
import { SIGNING_KEYS, type SigningKeyRecord } from "./records.ts";
import { newSigningKey, sealKey, unsealKey } from "./signing.ts";
import { WEBHOOKS_SETTINGS, type WebhooksSettings } from "./tokens.ts";

/** How long a replaced key signs beside the new one, unless the rotation says otherwise. */
export const DEFAULT_KEY_OVERLAP_MS = 24 * 3_600_000;
/** The longest overlap a rotation may ask for. */
export const MAX_KEY_OVERLAP_MS = 30 * 24 * 3_600_000;

const CACHE_MS = 5_000;
const CACHE_SIZE = 10_000;

/** A signing key as listed: never the key itself. */
export interface SigningKeyView {
  id: string;
  applicationId: string;
  createdAt: number;
  expiresAt?: number;
}

/**
 * The signing keys of applications. The newest signs every delivery; a key a
 * rotation replaced goes on signing beside it (a second `v1,` signature, and
 * the hex header alone) until its overlap ends. A key is shown once, when it
 * is made.
 */
@injectable()
export class SigningKeys {
  private readonly keys: Collection<SigningKeyRecord>;
  /** Sealed text → key: unsealing costs a key derivation and a decryption, and keys never change. */
  private readonly unsealed = new Map<string, string>();
  /** The signing keys of an application, read at most once per CACHE_MS (a rotation in this process clears them). */
  private readonly recent = new Map<string, { keys: string[]; until: number }>();

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(WEBHOOKS_SETTINGS) private readonly settings: WebhooksSettings,
  ) {
    this.keys = storage.collection(SIGNING_KEYS);
  }

  /**
   * A new key for the application, returned once. The keys it replaces sign
   * beside it for `overlapMs` (0: they stop at once).
   */
  async rotate(applicationId: string, overlapMs = DEFAULT_KEY_OVERLAP_MS): Promise<{ key: string; view: SigningKeyView; replaced: SigningKeyView[] }> {
    if (!Number.isSafeInteger(overlapMs) || overlapMs < 0 || overlapMs > MAX_KEY_OVERLAP_MS) {
      throw new RangeError(`the overlap must be from 0 to ${MAX_KEY_OVERLAP_MS / 3_600_000} hours`);
    }
    this.recent.delete(applicationId);
    return this.storage.transaction(async () => {
      const now = this.clock.now();
      const replaced: SigningKeyView[] = [];
      for (const old of await this.#live(applicationId, now)) {
        const expiresAt = Math.min(old.expiresAt ?? Infinity, now + overlapMs);
        replaced.push(view((await this.keys.update(old.id, { expiresAt }))!));
      }
      await this.keys.deleteWhere({ applicationId, expiresAt: { lte: now } });
      const key = newSigningKey();
      const record: SigningKeyRecord = { id: sortableId(now), applicationId, sealed: sealKey(this.settings.kitSecret, key), createdAt: now };
      await this.keys.insert(record);
      return { key, view: view(record), replaced };
    });
  }

  /** Makes the application's first key if it has none; returns it then (shown once), else undefined. */
  async ensure(applicationId: string): Promise<string | undefined> {
    return this.storage.transaction(async () => {
      if ((await this.#live(applicationId, this.clock.now())).length > 0) return undefined;
      return (await this.rotate(applicationId, 0)).key;
    });
  }

  /**
   * The keys that sign now, newest first. Throws when a key cannot be unsealed
   * (the kit secret changed). A rotation by another process (the CLI) takes
   * effect within CACHE_MS; an old key stops signing then too.
   */
  async signingKeys(applicationId: string): Promise<string[]> {
    const now = this.clock.now();
    const cached = this.recent.get(applicationId);
    if (cached && cached.until > now) return cached.keys;
    const live = await this.#live(applicationId, now);
    const keys = live.map((record) => {
      let key = this.unsealed.get(record.sealed);
      if (key === undefined) {
        try {
          key = unsealKey(this.settings.kitSecret, record.sealed);
        } catch {
          throw new Error(`the signing key ${record.id} of application ${applicationId} cannot be read with this kit secret; make a new one with reachkit webhooks signing-key --application ${applicationId}`);
        }
        this.unsealed.set(record.sealed, key);
      }
      return key;
    });
    // Until the oldest key's overlap ends, at most.
    const until = Math.min(now + CACHE_MS, ...live.flatMap((record) => (record.expiresAt !== undefined ? [record.expiresAt] : [])));
    if (this.recent.size >= CACHE_SIZE) this.recent.clear();
    this.recent.set(applicationId, { keys, until });
    return keys;
  }

  async list(applicationId: string): Promise<SigningKeyView[]> {
    return (await this.#live(applicationId, this.clock.now())).map(view);
  }

  async #live(applicationId: string, now: number): Promise<SigningKeyRecord[]> {
    const page = await this.keys.find({ where: { applicationId }, orderBy: [{ field: "id", direction: "desc" }] });
    return page.items.filter((record) => record.expiresAt === undefined || record.expiresAt > now);
  }
}

function view(record: SigningKeyRecord): SigningKeyView {
  return { id: record.id, applicationId: record.applicationId, createdAt: record.createdAt, ...(record.expiresAt !== undefined ? { expiresAt: record.expiresAt } : {}) };
}
