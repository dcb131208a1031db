import { inject, injectable, STORAGE, type Collection, type Storage } from "../../src/index.ts";
import type { PersonView } from "./profiles-service.ts";
import { ATTRIBUTES, EVENTS_COLLECTION, IDENTIFIERS, PROFILES, type AttributeRecord, type EventRecord, type IdentifierRecord, type ProfileRecord } from "./records.ts";

/** The most people one page reads. */
export const MAX_PEOPLE_PAGE = 1000;

/** A person of a page: where to reach them, what is known, and their events since the time asked for. */
export interface PagedPerson extends PersonView {
  /** The profile and the profiles merged into it. */
  profileIds: string[];
  /** Events since `eventsSince`, oldest first; empty when none was asked for. */
  events: EventRecord[];
}

/**
 * A company's live profiles read in pages, each page in a few bulk reads
 * (profiles, aliases, identifiers, attributes, events): what audience rules
 * evaluate, without a read per person.
 */
@injectable()
export class ProfilePages {
  private readonly profiles: Collection<ProfileRecord>;
  private readonly identifiers: Collection<IdentifierRecord>;
  private readonly attributes: Collection<AttributeRecord>;
  private readonly events: Collection<EventRecord>;

  constructor(@inject(STORAGE) storage: Storage) {
    this.profiles = storage.collection(PROFILES);
    this.identifiers = storage.collection(IDENTIFIERS);
    this.attributes = storage.collection(ATTRIBUTES);
    this.events = storage.collection(EVENTS_COLLECTION);
  }

  /** One page of live profiles in id order; `after`: the `nextCursor` of the page before. */
  async page(companyId: string, options: { after?: string; limit: number; eventsSince?: number }): Promise<{ people: PagedPerson[]; nextCursor?: string }> {
    const limit = Math.min(Math.max(Math.trunc(options.limit), 1), MAX_PEOPLE_PAGE);
    const live = await this.profiles.find({ where: { companyId, mergedInto: null }, orderBy: [{ field: "id" }], limit, ...(options.after !== undefined ? { after: options.after } : {}) });
    if (live.items.length === 0) return { people: [] };
    const liveIds = live.items.map((profile) => profile.id);
    const aliasOf = new Map<string, string>(liveIds.map((id) => [id, id]));
    for (const alias of (await this.profiles.find({ where: { companyId, mergedInto: { in: liveIds } } })).items) aliasOf.set(alias.id, alias.mergedInto!);
    const allIds = [...aliasOf.keys()];
    const [identifiers, attributes, events] = await Promise.all([
      this.identifiers.find({ where: { companyId, profileId: { in: allIds } }, orderBy: [{ field: "linkedAt" }] }),
      this.attributes.find({ where: { companyId, profileId: { in: allIds } } }),
      options.eventsSince === undefined
        ? undefined
        : this.events.find({ where: { profileId: { in: allIds }, seq: { gte: String(options.eventsSince).padStart(13, "0") } }, orderBy: [{ field: "seq" }] }),
    ]);
    const people = new Map<string, PagedPerson>(liveIds.map((id) => [id, { id, profileIds: [], attributes: {}, events: [] }]));
    for (const [alias, id] of aliasOf) people.get(id)!.profileIds.push(alias);
    for (const identifier of identifiers.items) {
      const person = people.get(aliasOf.get(identifier.profileId)!)!;
      // Oldest link first, so the phone and email kept are the ones linked last.
      if (identifier.kind === "phone") person.phone = identifier.value;
      if (identifier.kind === "email") person.email = identifier.value;
    }
    const setAt = new Map<string, number>();
    for (const attribute of attributes.items) {
      const id = aliasOf.get(attribute.profileId)!;
      const key = `${id}:${attribute.name}`;
      if ((setAt.get(key) ?? -1) >= attribute.setAt) continue;
      setAt.set(key, attribute.setAt);
      (people.get(id)!.attributes as Record<string, AttributeRecord["value"]>)[attribute.name] = attribute.value;
    }
    for (const event of events?.items ?? []) if (event.companyId === companyId) people.get(aliasOf.get(event.profileId)!)!.events.push(event);
    return { people: [...people.values()], ...(live.nextCursor !== undefined ? { nextCursor: live.nextCursor } : {}) };
  }
}
