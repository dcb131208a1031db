import * as v from "valibot";
import { EVENTS, inject, injectable, parseOrThrow, STORAGE, type DataSubject, type EventBus, type Storage } from "../../src/index.ts";
import type { EventTimeline, RecordedEvent, RecordOptions, TimelinePage } from "./event-timeline.ts";
import type { IdentityGraph } from "./identity-graph.ts";
import type { ProfileAttribute, ProfileAttributes } from "./profile-attributes.ts";
import type { AttributeValue, EventKind, Identifier, IdentifierKind } from "./records.ts";
import { profileSchemas } from "./schemas.ts";
import { EVENT_TIMELINE, IDENTITY_GRAPH, PROFILE_ATTRIBUTES } from "./tokens.ts";

/** The request bodies as the wire carries them (the in-process methods validate them like the routes). */
export type CustomEventRequest = v.InferInput<typeof profileSchemas.customEvent>;
export type EcommerceEventRequest = v.InferInput<typeof profileSchemas.ecommerceEvent>;
export type PurchaseEventRequest = v.InferInput<typeof profileSchemas.purchaseEvent>;
export type AttributesRequest = v.InferInput<typeof profileSchemas.attributes>;
export type IdentifyRequest = v.InferInput<typeof profileSchemas.identify>;

/** One identifier of a profile as it is read. */
export interface ProfileIdentifier {
  kind: IdentifierKind;
  /** The name of a custom identifier. */
  name?: string;
  value: string;
  linkedAt: number;
}

/** A person as the company knows them. */
export interface ProfileView {
  id: string;
  createdAt: number;
  /** Every identifier, oldest link first. */
  identifiers: ProfileIdentifier[];
  /** The reference's shape: the latest linked of each kind, and every custom identifier. */
  externalIdentifiers: { clientUserId?: string; shopifyId?: string; klaviyoId?: string; customIdentifiers: Array<{ name: string; value: string }> };
  attributes: ProfileAttribute[];
}

/** A person by profile id, as a message to them needs them: where to reach them and what is known. */
export interface PersonView {
  /** The live profile (the survivor when the id given was merged into another). */
  id: string;
  /** The phone and email linked last. */
  phone?: string;
  email?: string;
  /** Attribute values by name. */
  attributes: Readonly<Record<string, AttributeValue>>;
}

/**
 * Profiles in process: what the v1 routes do (`kit.plugin("profiles")`, or
 * other plugins through `PROFILES_SERVICE`), and the reads behind GraphQL and
 * the CLI. Every method is scoped by the company id it is given.
 */
@injectable()
export class ProfilesService {
  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(IDENTITY_GRAPH) private readonly identity: IdentityGraph,
    @inject(EVENT_TIMELINE) private readonly timeline: EventTimeline,
    @inject(PROFILE_ATTRIBUTES) private readonly attributeStore: ProfileAttributes,
    @inject(EVENTS) private readonly bus: EventBus,
  ) {}

  /** Links identifiers to one profile (`POST /v1/identity-resolution/user-identifiers`); returns it. */
  async identify(companyId: string, request: IdentifyRequest): Promise<string> {
    return this.identity.link(companyId, parseOrThrow(profileSchemas.identify, request, "body"));
  }

  /** Links identifiers already validated (another plugin's, such as a subscriber's); returns the profile. */
  link(companyId: string, identifiers: readonly Identifier[]): Promise<string> {
    return this.identity.link(companyId, identifiers);
  }

  /** `link` for many people of one company (`people[i]` the identifiers of one), in one read and a write or two: see `IdentityGraph.linkMany`. */
  linkMany(companyId: string, people: ReadonlyArray<readonly Identifier[]>): Promise<void> {
    return this.identity.linkMany(companyId, people);
  }

  async recordCustomEvent(companyId: string, request: CustomEventRequest, options?: RecordOptions): Promise<RecordedEvent> {
    return this.timeline.recordCustom(companyId, parseOrThrow(profileSchemas.customEvent, request, "body"), options);
  }

  recordEcommerceEvent(companyId: string, kind: "product_view" | "add_to_cart", request: EcommerceEventRequest, options?: RecordOptions): Promise<RecordedEvent>;
  recordEcommerceEvent(companyId: string, kind: "purchase", request: PurchaseEventRequest, options?: RecordOptions): Promise<RecordedEvent>;
  async recordEcommerceEvent(
    companyId: string,
    kind: Exclude<EventKind, "custom">,
    request: EcommerceEventRequest | PurchaseEventRequest,
    options?: RecordOptions,
  ): Promise<RecordedEvent> {
    const schema = kind === "purchase" ? profileSchemas.purchaseEvent : profileSchemas.ecommerceEvent;
    return this.timeline.recordEcommerce(companyId, kind, parseOrThrow(schema, request, "body"), options);
  }

  /** Sets custom attributes (`POST /v1/attributes/custom`); returns the profile. */
  async setAttributes(companyId: string, request: AttributesRequest): Promise<string> {
    return this.attributeStore.set(companyId, parseOrThrow(profileSchemas.attributes, request, "body"));
  }

  /** The profile an identifier belongs to. */
  find(companyId: string, identifier: Identifier): Promise<string | undefined> {
    return this.identity.find(companyId, identifier);
  }

  /** `GET /v1/attributes/custom`: the attributes of the person an identifier names; none for an unknown one. */
  async attributes(companyId: string, identifier: Identifier): Promise<Array<{ name: string; value: AttributeValue }>> {
    const profileId = await this.identity.find(companyId, identifier);
    if (profileId === undefined) return [];
    return (await this.attributeStore.of(companyId, await this.identity.aliases(companyId, profileId))).map(({ name, value }) => ({ name, value }));
  }

  /** The profile an identifier belongs to, with its identifiers and attributes. */
  async show(companyId: string, identifier: Identifier): Promise<ProfileView | undefined> {
    const profileId = await this.identity.find(companyId, identifier);
    const profile = profileId === undefined ? undefined : await this.identity.profile(profileId);
    if (!profile) return undefined;
    const ids = await this.identity.aliases(companyId, profile.id);
    const identifiers = (await this.identity.identifiersOf(companyId, ids)).map(({ kind, name, value, linkedAt }) => ({ kind, ...(name !== undefined ? { name } : {}), value, linkedAt }));
    const latest = (kind: IdentifierKind) => identifiers.findLast((identifier) => identifier.kind === kind)?.value;
    const externalIdentifiers: ProfileView["externalIdentifiers"] = { customIdentifiers: [] };
    for (const kind of ["clientUserId", "shopifyId", "klaviyoId"] as const) {
      const value = latest(kind);
      if (value !== undefined) externalIdentifiers[kind] = value;
    }
    for (const identifier of identifiers) if (identifier.kind === "custom") externalIdentifiers.customIdentifiers.push({ name: identifier.name!, value: identifier.value });
    return { id: profile.id, createdAt: profile.createdAt, identifiers, externalIdentifiers, attributes: await this.attributeStore.of(companyId, ids) };
  }

  /** A person by profile id (an alias reads as the profile it was merged into); undefined once erased. */
  async person(companyId: string, profileId: string): Promise<PersonView | undefined> {
    const record = await this.identity.profile(profileId);
    if (!record || record.companyId !== companyId) return undefined;
    const id = record.mergedInto ?? record.id;
    const ids = await this.identity.aliases(companyId, id);
    const identifiers = await this.identity.identifiersOf(companyId, ids);
    const latest = (kind: IdentifierKind) => identifiers.findLast((identifier) => identifier.kind === kind)?.value;
    const phone = latest("phone");
    const email = latest("email");
    const attributes = Object.fromEntries((await this.attributeStore.of(companyId, ids)).map(({ name, value }) => [name, value]));
    return { id, ...(phone !== undefined ? { phone } : {}), ...(email !== undefined ? { email } : {}), attributes };
  }

  /** The live profiles of a subject's phone and email (privacy deletion in other plugins). */
  async subjectProfiles(subject: DataSubject): Promise<string[]> {
    const profileIds = new Set<string>();
    if (subject.phone !== undefined) profileIds.add((await this.find(subject.companyId, { kind: "phone", value: subject.phone.trim() })) ?? "");
    if (subject.email !== undefined) profileIds.add((await this.find(subject.companyId, { kind: "email", value: subject.email.trim().toLowerCase() })) ?? "");
    profileIds.delete("");
    return [...profileIds];
  }

  /** A page of a profile's events, newest first (at most 100). */
  events(companyId: string, profileId: string, options: { first: number; after?: string }): Promise<TimelinePage> {
    return this.timeline.page(companyId, profileId, options);
  }

  /** Erases the profiles of a subject's phone and email: identifiers, attributes, events. Returns how many records. */
  async deleteSubjectData(subject: DataSubject): Promise<number> {
    const { companyId } = subject;
    const given: Identifier[] = [];
    if (subject.phone !== undefined) given.push({ kind: "phone", value: subject.phone.trim() });
    if (subject.email !== undefined) given.push({ kind: "email", value: subject.email.trim().toLowerCase() });
    return this.storage.transaction(async () => {
      const profiles = new Set<string>();
      for (const identifier of given) {
        const profileId = await this.identity.find(companyId, identifier);
        if (profileId !== undefined) for (const id of await this.identity.aliases(companyId, profileId)) profiles.add(id);
      }
      if (profiles.size === 0) return 0;
      const removed = await this.identity.erase(companyId, [...profiles]);
      await this.bus.emit("profile.erased", { companyId, profileIds: [...profiles] });
      return removed;
    });
  }
}
