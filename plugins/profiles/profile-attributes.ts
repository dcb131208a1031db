import {
  CLOCK,
  EVENTS,
  inject,
  injectable,
  invalidFields,
  STORAGE,
  UniqueConstraintError,
  type Clock,
  type Collection,
  type ErrorDetail,
  type EventBus,
  type Storage,
} from "../../src/index.ts";
import type { IdentityGraph } from "./identity-graph.ts";
import { ATTRIBUTE_TYPES_COLLECTION, ATTRIBUTES, type AttributeRecord, type Identifier, type AttributeType, type AttributeTypeRecord, type AttributeValue } from "./records.ts";
import type { AttributesInput } from "./schemas.ts";
import { IDENTITY_GRAPH } from "./tokens.ts";

/** What `profile.attributes.set` carries. */
export interface ProfileAttributesSet {
  companyId: string;
  profileId: string;
  /** Whom the request named: its phone, email and external identifiers. */
  user: Identifier[];
  attributes: Array<{ name: string; value: AttributeValue }>;
  at: number;
}

// Augments the module that declares the interface, not src/index.ts that re-exports it: with an
// augmentation through the re-export, TypeScript 5.9 lost the augmentations of plugins it read later.
declare module "../../src/events/event-bus.ts" {
  interface ReachkitEvents {
    /** Custom attributes were set on a profile (the reference's `custom_attribute.set` webhook). */
    "profile.attributes.set": ProfileAttributesSet;
  }
}

/** One attribute of a profile as it is read. */
export interface ProfileAttribute {
  name: string;
  value: AttributeValue;
  type: AttributeType;
  setAt: number;
}

/** Attribute types remembered in memory; beyond it the memory starts again. */
const REMEMBERED_TYPES = 10_000;

const typeOf = (value: AttributeValue) => typeof value as AttributeType;

/**
 * Custom attributes: flat values per profile, each name's type fixed at a
 * company by the first value ever set (types never change, so they are
 * remembered in memory once read).
 */
@injectable()
export class ProfileAttributes {
  private readonly values: Collection<AttributeRecord>;
  private readonly types: Collection<AttributeTypeRecord>;
  private readonly knownTypes = new Map<string, AttributeType>();

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(EVENTS) private readonly bus: EventBus,
    @inject(IDENTITY_GRAPH) private readonly identity: IdentityGraph,
  ) {
    this.values = storage.collection(ATTRIBUTES);
    this.types = storage.collection(ATTRIBUTE_TYPES_COLLECTION);
  }

  /** `POST /v1/attributes/custom`: one transaction, so a refused value leaves nothing stored. Returns the profile. */
  async set(companyId: string, input: AttributesInput): Promise<string> {
    const now = this.clock.now();
    const entries = Object.entries(input.properties);
    const profileId = await this.storage.transaction(async () => {
      const refused: ErrorDetail[] = [];
      const unseen: AttributeTypeRecord[] = [];
      for (const [name, value] of entries) {
        const type = await this.#typeOf(companyId, name);
        if (type === undefined) unseen.push({ id: `${companyId}:${name}`, companyId, name, type: typeOf(value), firstSetAt: now });
        else if (type !== typeOf(value)) refused.push({ path: `properties.${name}`, message: `must be a ${type}: the first value set for this attribute fixed its type` });
      }
      if (refused.length > 0) throw invalidFields(refused);
      const profileId = await this.identity.link(companyId, input.user, { requireContact: true });
      for (const record of unseen) await this.#fixType(record);
      if (entries.length > 0) {
        await this.values.upsertMany(entries.map(([name, value]) => ({ id: `${profileId}:${name}`, companyId, profileId, name, value, setAt: now })));
      }
      // In the transaction: in-transaction listeners (webhook deliveries) commit with the values.
      if (entries.length > 0) await this.bus.emit("profile.attributes.set", { companyId, profileId, user: input.user, attributes: entries.map(([name, value]) => ({ name, value })), at: now });
      return profileId;
    });
    return profileId;
  }

  /** The attributes of a profile and its aliases (the value set last of each name), by name. */
  async of(companyId: string, profileIds: readonly string[]): Promise<ProfileAttribute[]> {
    const records = (await this.values.find({ where: { companyId, profileId: { in: [...profileIds] } } })).items;
    const latest = new Map<string, AttributeRecord>();
    for (const record of records) {
      const seen = latest.get(record.name);
      if (!seen || seen.setAt < record.setAt) latest.set(record.name, record);
    }
    return [...latest.values()]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map(({ name, value, setAt }) => ({ name, value, type: typeOf(value), setAt }));
  }

  async #typeOf(companyId: string, name: string): Promise<AttributeType | undefined> {
    const id = `${companyId}:${name}`;
    const remembered = this.knownTypes.get(id);
    if (remembered !== undefined) return remembered;
    const stored = await this.types.get(id);
    if (stored) this.#remember(id, stored.type);
    return stored?.type;
  }

  /**
   * Fixes a type; a concurrent request that fixed another one first makes this
   * value a 400. Not remembered here: the transaction may still roll back; the
   * next read of it remembers it.
   */
  async #fixType(record: AttributeTypeRecord): Promise<void> {
    try {
      await this.types.insert(record);
    } catch (error) {
      if (!(error instanceof UniqueConstraintError)) throw error;
      const stored = await this.types.get(record.id);
      if (stored && stored.type !== record.type) {
        throw invalidFields([{ path: `properties.${record.name}`, message: `must be a ${stored.type}: the first value set for this attribute fixed its type` }]);
      }
    }
  }

  #remember(id: string, type: AttributeType): void {
    if (this.knownTypes.size >= REMEMBERED_TYPES) this.knownTypes.clear();
    this.knownTypes.set(id, type);
  }
}
