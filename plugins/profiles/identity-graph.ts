import { CLOCK, injectable, inject, inJoinedTransaction, invalidFields, sortableId, STORAGE, UniqueConstraintError, type Clock, type Collection, type Storage } from "../../src/index.ts";
import {
  ATTRIBUTES,
  EVENTS_COLLECTION,
  IDENTIFIERS,
  identifierKey,
  PROFILES,
  type AttributeRecord,
  type EventRecord,
  type Identifier,
  type IdentifierRecord,
  type ProfileRecord,
} from "./records.ts";

export interface LinkOptions {
  /** Identifiers that name no profile holding a phone or an email answer 400 (a write about someone unknown). */
  requireContact?: boolean;
}

/** How often a link is tried again when a concurrent request linked one of its identifiers first. */
const LINK_ATTEMPTS = 5;

/** The error of a user whose identifiers name no person with a phone or an email. */
const unknownUser = () =>
  invalidFields([{ path: "user", message: "needs a phone or an email, or an external identifier already linked to one (identity-resolution/user-identifiers)" }]);

/**
 * Who is who: the identifiers of each company's people and the profiles they
 * belong to. Identifiers that arrive together belong to one person; when they
 * already belong to different profiles, those profiles are merged (the rule is
 * in docs/events-and-profiles.md).
 */
@injectable()
export class IdentityGraph {
  private readonly profiles: Collection<ProfileRecord>;
  private readonly identifiers: Collection<IdentifierRecord>;
  private readonly attributes: Collection<AttributeRecord>;
  private readonly events: Collection<EventRecord>;

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
  ) {
    this.profiles = storage.collection(PROFILES);
    this.identifiers = storage.collection(IDENTIFIERS);
    this.attributes = storage.collection(ATTRIBUTES);
    this.events = storage.collection(EVENTS_COLLECTION);
  }

  /**
   * The profile of the person these identifiers name, linking them all to it:
   * a new profile when none is known, the merge of several when they were
   * apart. With `requireContact`, identifiers that name no profile holding a
   * phone or an email answer 400 and nothing is stored. A known person
   * costs one read. Called inside a transaction (a job's) on a storage
   * whose transactions run one at a time, nothing can link these identifiers
   * between the read and the writes: they are written in the caller's
   * transaction, without a savepoint of their own.
   */
  async link(companyId: string, identifiers: readonly Identifier[], options: LinkOptions = {}): Promise<string> {
    const keys = [...new Set(identifiers.map(identifierKey))];
    const known = await this.#known(companyId, keys);
    const profileIds = new Set(known.map((record) => record.profileId));
    if (known.length === keys.length && profileIds.size === 1) {
      const [profileId] = profileIds as Set<string>;
      if (!options.requireContact || identifiers.some(isContact)) return profileId!;
      // An alias holds no identifiers of its own once merged: ask its live profile.
      const live = await this.#live(profileId!);
      if (live !== undefined && (await this.hasContact(companyId, live))) return profileId!;
      throw unknownUser();
    }
    if (options.requireContact && !identifiers.some(isContact) && profileIds.size === 0) throw unknownUser();
    // The caller's transaction holds the storage from the read on: no race to retry, no savepoint to undo it.
    if (this.#holdsStorage()) return this.#linkNow(companyId, identifiers, keys, known, options.requireContact ?? false);
    for (let attempt = 1; ; attempt++) {
      // A person none of whose identifiers is known needs no second read in the transaction: an identifier
      // linked meanwhile fails its insert (UniqueConstraintError) and the next attempt reads them again. Known
      // ones are read again, as their profiles may have been merged or erased meanwhile.
      const knownBefore = attempt === 1 && known.length === 0 ? known : undefined;
      try {
        return await this.storage.transaction(() => this.#linkNow(companyId, identifiers, keys, knownBefore, options.requireContact ?? false));
      } catch (error) {
        // Another request linked one of these identifiers between our read and our insert: read again.
        if (!(error instanceof UniqueConstraintError) || attempt >= LINK_ATTEMPTS) throw error;
      }
    }
  }

  /**
   * `link` for many people of one company, each in turn (`people[i]` the identifiers of one), for callers that
   * need no profile id back (a batch of opt-ins): one read of all their identifiers, then a person all of whose
   * identifiers one profile holds costs nothing more, and the new people (none of their identifiers known, none
   * shared with another of the list) are written together, their profiles in one write and their identifiers in
   * another. Anyone else is linked by `link`, in list order. In the caller's transaction, when it has one.
   */
  async linkMany(companyId: string, people: ReadonlyArray<readonly Identifier[]>): Promise<void> {
    const keysOf = people.map((identifiers) => [...new Set(identifiers.map(identifierKey))]);
    const peopleWithKey = new Map<string, number>();
    for (const keys of keysOf) for (const key of keys) peopleWithKey.set(key, (peopleWithKey.get(key) ?? 0) + 1);
    const link = async () => {
      const known = new Map((await this.#known(companyId, [...peopleWithKey.keys()])).map((record) => [record.key, record]));
      const now = this.clock.now();
      const profiles: ProfileRecord[] = [];
      const identifiers: IdentifierRecord[] = [];
      const others: Array<readonly Identifier[]> = [];
      people.forEach((person, i) => {
        const keys = keysOf[i]!;
        const holders = new Set(keys.map((key) => known.get(key)?.profileId));
        if (holders.size === 1 && !holders.has(undefined)) return;
        if (holders.size === 1 && keys.every((key) => peopleWithKey.get(key) === 1)) {
          const profileId = sortableId(now);
          profiles.push({ id: profileId, companyId, createdAt: now, updatedAt: now });
          const written = new Set<string>();
          for (const identifier of person) {
            const key = identifierKey(identifier);
            if (written.has(key)) continue; // named twice
            written.add(key);
            identifiers.push({ id: sortableId(now), companyId, key, ...identifier, profileId, linkedAt: now });
          }
          return;
        }
        others.push(person);
      });
      if (profiles.length > 0) {
        await this.profiles.upsertMany(profiles);
        await this.identifiers.upsertMany(identifiers);
      }
      for (const person of others) await this.link(companyId, person);
    };
    await inJoinedTransaction(this.storage, link);
  }

  /** The live profile an identifier belongs to, if any. */
  async find(companyId: string, identifier: Identifier): Promise<string | undefined> {
    const record = await this.identifiers.findOne({ companyId, key: identifierKey(identifier) });
    return record ? this.#live(record.profileId) : undefined;
  }

  /** A profile and the profiles merged into it: every read of a person's data takes all of them. */
  async aliases(companyId: string, profileId: string): Promise<string[]> {
    const merged = await this.profiles.find({ where: { companyId, mergedInto: profileId } });
    return [profileId, ...merged.items.map((profile) => profile.id)];
  }

  async profile(profileId: string): Promise<ProfileRecord | undefined> {
    return this.profiles.get(profileId);
  }

  /** Every identifier of a profile and its aliases, oldest first. */
  async identifiersOf(companyId: string, profileIds: readonly string[]): Promise<IdentifierRecord[]> {
    const page = await this.identifiers.find({ where: { companyId, profileId: { in: [...profileIds] } }, orderBy: [{ field: "linkedAt" }] });
    return page.items;
  }

  async hasContact(companyId: string, profileId: string): Promise<boolean> {
    const ids = await this.aliases(companyId, profileId);
    return (await this.identifiers.findOne({ companyId, profileId: { in: ids }, kind: { in: ["phone", "email"] } })) !== undefined;
  }

  /** Deletes profiles (give each with its aliases) and their identifiers, attributes and events; returns how many records. */
  async erase(companyId: string, profileIds: readonly string[]): Promise<number> {
    const profileId = { in: [...profileIds] };
    let removed = await this.events.deleteWhere({ companyId, profileId });
    removed += await this.attributes.deleteWhere({ companyId, profileId });
    removed += await this.identifiers.deleteWhere({ companyId, profileId });
    return removed + (await this.profiles.deleteWhere({ companyId, id: profileId }));
  }

  /**
   * Whether the caller's transaction holds the storage from a read to the writes that follow it: inside a
   * transaction, on a storage whose transactions run one at a time.
   */
  #holdsStorage(): boolean {
    return this.storage.inTransaction?.() === true && !this.storage.transactionsRunConcurrently;
  }

  async #known(companyId: string, keys: readonly string[]): Promise<IdentifierRecord[]> {
    if (keys.length === 1) {
      const record = await this.identifiers.findOne({ companyId, key: keys[0]! });
      return record ? [record] : [];
    }
    return (await this.identifiers.find({ where: { companyId, key: { in: [...keys] } } })).items;
  }

  /** The link, inside a transaction: read again (unless `knownBefore` is given), then create, extend or merge. */
  async #linkNow(
    companyId: string,
    identifiers: readonly Identifier[],
    keys: readonly string[],
    knownBefore: readonly IdentifierRecord[] | undefined,
    requireContact: boolean,
  ): Promise<string> {
    const now = this.clock.now();
    const known = knownBefore ?? (await this.#known(companyId, keys));
    const live = new Map<string, ProfileRecord>();
    for (const profileId of new Set(known.map((record) => record.profileId))) {
      const profile = await this.#liveProfile(profileId);
      if (profile) live.set(profile.id, profile);
    }
    const [survivor, ...merged] = [...live.values()].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
    if (requireContact && !identifiers.some(isContact)) {
      const contact = await Promise.all([...live.keys()].map((profileId) => this.hasContact(companyId, profileId)));
      if (!contact.includes(true)) throw unknownUser();
    }
    const profileId = survivor?.id ?? (await this.profiles.insert({ id: sortableId(now), companyId, createdAt: now, updatedAt: now })).id;
    for (const other of merged) await this.#merge(companyId, other.id, profileId, now);
    const knownKeys = new Set(known.map((record) => record.key));
    for (const identifier of identifiers) {
      const key = identifierKey(identifier);
      if (knownKeys.has(key)) continue;
      knownKeys.add(key);
      await this.identifiers.insert({ id: sortableId(now), companyId, key, ...identifier, profileId, linkedAt: now });
    }
    // Identifiers found on an alias (a write that raced with a merge) join the live profile.
    const stray = known.filter((record) => record.profileId !== profileId).map((record) => record.id);
    if (stray.length > 0) await this.identifiers.updateWhere({ id: { in: stray } }, { profileId });
    // A profile created above has this updatedAt already.
    if (survivor && (merged.length > 0 || knownKeys.size > known.length)) await this.profiles.update(profileId, { updatedAt: now });
    return profileId;
  }

  /**
   * Moves everything of `from` to `into` and leaves `from` as its alias. An
   * attribute both hold keeps the value set last. Events move too, so that a
   * timeline is read from one profile's index range.
   */
  async #merge(companyId: string, from: string, into: string, now: number): Promise<void> {
    await this.identifiers.updateWhere({ companyId, profileId: from }, { profileId: into });
    await this.events.updateWhere({ companyId, profileId: from }, { profileId: into });
    const theirs = (await this.attributes.find({ where: { companyId, profileId: from } })).items;
    for (const attribute of theirs) {
      const ours = await this.attributes.get(`${into}:${attribute.name}`);
      if (!ours || ours.setAt < attribute.setAt) await this.attributes.upsert({ ...attribute, id: `${into}:${attribute.name}`, profileId: into });
      await this.attributes.delete(attribute.id);
    }
    await this.profiles.updateWhere({ companyId, mergedInto: from }, { mergedInto: into, updatedAt: now });
    await this.profiles.update(from, { mergedInto: into, updatedAt: now });
  }

  async #live(profileId: string): Promise<string | undefined> {
    return (await this.#liveProfile(profileId))?.id;
  }

  async #liveProfile(profileId: string): Promise<ProfileRecord | undefined> {
    const profile = await this.profiles.get(profileId);
    if (profile?.mergedInto === undefined) return profile;
    return this.profiles.get(profile.mergedInto);
  }
}

const isContact = (identifier: Identifier) => identifier.kind === "phone" || identifier.kind === "email";
