import {
  CLOCK,
  EVENTS,
  GROUP_COMMIT,
  inject,
  injectable,
  invalidFields,
  sortableId,
  STORAGE,
  UniqueConstraintError,
  type Clock,
  type Collection,
  type EventBus,
  type GroupCommit,
  type JsonValue,
  type Storage,
} from "../../src/index.ts";
import type { EventPropertyKeys } from "./event-property-keys.ts";
import type { IdentityGraph } from "./identity-graph.ts";
import { eventId, EVENTS_COLLECTION, type EventKind, type EventRecord, type ProductItem } from "./records.ts";
import type { CustomEventInput, EcommerceEventInput, EventFields, PurchaseEventInput } from "./schemas.ts";
import { EVENT_PROPERTY_KEYS, IDENTITY_GRAPH } from "./tokens.ts";

/** An event that occurred longer ago than this is stored but triggers nothing (the reference's rule). */
export const LATE_EVENT_MS = 12 * 60 * 60_000;
/** How far ahead of the server's clock an occurredAt may be (clients' clocks drift; a year 9999 would top every timeline). */
export const MAX_CLOCK_AHEAD_MS = 24 * 60 * 60_000;
/** Events of one timeline page. */
export const MAX_PAGE_SIZE = 100;

/** What `profile.event.recorded` carries. */
export interface ProfileEventRecorded {
  companyId: string;
  profileId: string;
  eventId: string;
  kind: EventKind;
  /** The type of a custom event. */
  type?: string;
  /** The properties of a custom event, as stored. */
  properties?: Readonly<Record<string, JsonValue>>;
  /** The products of an ecommerce event, as stored. */
  items?: readonly ProductItem[];
  occurredAt: number;
  at: number;
}

// Augments the module that declares the interface, not src/index.ts that re-exports it: with an
// augmentation through the re-export, TypeScript 5.9 lost the augmentations of plugins it read later.
declare module "../../src/events/event-bus.ts" {
  interface ReachkitEvents {
    /** A custom or ecommerce event was stored that occurred within the last 12 hours (older ones trigger nothing). */
    "profile.event.recorded": ProfileEventRecorded;
    /** Profiles were erased by a privacy deletion, inside its transaction: whatever other plugins keep about them goes too. */
    "profile.erased": ProfileErased;
  }
}

/** What `profile.erased` carries: a person's profile and its aliases. */
export interface ProfileErased {
  companyId: string;
  profileIds: readonly string[];
}

/** The outcome of recording an event. */
export interface RecordedEvent {
  profileId: string;
  /** The stored event, or the one stored before when `duplicate`. */
  eventId: string;
  /** An event with the same externalEventId was stored before: nothing was stored now. */
  duplicate: boolean;
  /** Older than 12 hours: stored, triggered nothing. */
  late: boolean;
}

export interface TimelinePage {
  /** Newest first. */
  events: EventRecord[];
  hasNextPage: boolean;
}

/** How a write of an event commits. */
export interface RecordOptions {
  /**
   * Share the commit of the other events recorded in this event-loop turn
   * (`GroupCommit`): for callers outside any transaction, such as the v1
   * routes. Otherwise the event commits alone, or with the caller's transaction.
   */
  groupCommit?: boolean;
}

/** The position of an event in its timeline, which `page` takes as `after`. */
export const timelineCursor = (event: Pick<EventRecord, "seq">) => event.seq;

/**
 * The custom and ecommerce events of each profile: recorded through the v1
 * routes (or in process), idempotent by externalEventId, read newest first.
 */
@injectable()
export class EventTimeline {
  private readonly events: Collection<EventRecord>;

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(EVENTS) private readonly bus: EventBus,
    @inject(IDENTITY_GRAPH) private readonly identity: IdentityGraph,
    @inject(EVENT_PROPERTY_KEYS) private readonly propertyKeys: EventPropertyKeys,
    @inject(GROUP_COMMIT) private readonly groupCommit: GroupCommit,
  ) {
    this.events = storage.collection(EVENTS_COLLECTION);
  }

  /** `POST /v1/events/custom`. */
  async recordCustom(companyId: string, input: CustomEventInput, options: RecordOptions = {}): Promise<RecordedEvent> {
    const now = this.#checkTime(input);
    const keys = input.properties === undefined ? [] : Object.keys(input.properties);
    const unseen = keys.length === 0 ? [] : await this.propertyKeys.unseen(companyId, input.type, keys);
    const profileId = await this.identity.link(companyId, input.user, { requireContact: true });
    await this.propertyKeys.add(companyId, input.type, unseen);
    return this.#store(companyId, profileId, now, input, { kind: "custom", type: input.type, ...(input.properties !== undefined ? { properties: input.properties } : {}) }, options);
  }

  /** `POST /v1/events/ecommerce/{product-view,add-to-cart,purchase}`. */
  async recordEcommerce(
    companyId: string,
    kind: Exclude<EventKind, "custom">,
    input: EcommerceEventInput | PurchaseEventInput,
    options: RecordOptions = {},
  ): Promise<RecordedEvent> {
    const now = this.#checkTime(input);
    const profileId = await this.identity.link(companyId, input.user, { requireContact: true });
    const purchase = input as Partial<PurchaseEventInput>;
    return this.#store(companyId, profileId, now, input, {
      kind,
      items: input.items,
      ...(purchase.orderId !== undefined ? { orderId: purchase.orderId } : {}),
      ...(purchase.salesChannel !== undefined ? { salesChannel: purchase.salesChannel } : {}),
    }, options);
  }

  /** A page of a profile's timeline, newest first; `after` is the cursor of the last event of the previous page. */
  async page(companyId: string, profileId: string, options: { first: number; after?: string }): Promise<TimelinePage> {
    if (!Number.isSafeInteger(options.first) || options.first < 0 || options.first > MAX_PAGE_SIZE) {
      throw new RangeError(`first must be an integer from 0 to ${MAX_PAGE_SIZE}`);
    }
    if (options.first === 0) return { events: [], hasNextPage: false };
    // The company is checked once on the profile (its events and aliases are all the company's), not on each
    // event: a condition on a field outside the index made PostgreSQL, before it had statistics, guess so few
    // rows that it sorted them all rather than walk the index.
    if ((await this.identity.profile(profileId))?.companyId !== companyId) return { events: [], hasNextPage: false };
    const ids = await this.identity.aliases(companyId, profileId);
    const page = await this.events.find({
      where: { profileId: ids.length === 1 ? ids[0]! : { in: ids }, ...(options.after !== undefined ? { seq: { lt: options.after } } : {}) },
      // seq ends with the id, so no two events share it: the id, descending too, orders nothing more, and lets the
      // read walk the (profileId, seq) index backwards, stopping after `first` (ascending, it made SQLite sort the
      // person's every event to break ties that never occur).
      orderBy: [
        { field: "seq", direction: "desc" },
        { field: "id", direction: "desc" },
      ],
      limit: options.first,
    });
    return { events: page.items, hasNextPage: page.nextCursor !== undefined };
  }

  /** The server's now; 400 for an occurredAt too far ahead of it. */
  #checkTime(input: EventFields): number {
    const now = this.clock.now();
    if (input.occurredAt !== undefined && input.occurredAt > now + MAX_CLOCK_AHEAD_MS) {
      throw invalidFields([{ path: input.occurredAtField, message: "must not be more than 24 hours ahead of the server's clock" }]);
    }
    return now;
  }

  async #store(
    companyId: string,
    profileId: string,
    now: number,
    input: EventFields,
    content: Pick<EventRecord, "kind" | "type" | "properties" | "items" | "orderId" | "salesChannel">,
    options: RecordOptions,
  ): Promise<RecordedEvent> {
    const occurredAt = input.occurredAt ?? now;
    const late = now - occurredAt > LATE_EVENT_MS;
    const id = eventId(companyId, input.externalEventId, () => sortableId(now));
    const event: EventRecord = {
      id,
      companyId,
      profileId,
      seq: `${String(occurredAt).padStart(13, "0")}${id}`,
      ...content,
      occurredAt,
      receivedAt: now,
      ...(input.externalEventId !== undefined ? { externalEventId: input.externalEventId } : {}),
      ...(late ? { late: true as const } : {}),
    };
    if (late) return this.#insert(event, input, late);
    // The event and what its in-transaction listeners write (a journey's job) commit together: a crash
    // right after the insert cannot leave a stored event whose reaction was never recorded.
    const write = async () => {
      const recorded = await this.#insert(event, input, late);
      if (!recorded.duplicate) {
        await this.bus.emit("profile.event.recorded", {
          companyId,
          profileId,
          eventId: id,
          kind: event.kind,
          ...(event.type !== undefined ? { type: event.type } : {}),
          ...(event.properties !== undefined ? { properties: event.properties } : {}),
          ...(event.items !== undefined ? { items: event.items } : {}),
          occurredAt,
          at: now,
        });
      }
      return recorded;
    };
    return options.groupCommit ? this.groupCommit.run(write) : this.storage.transaction(write);
  }

  async #insert(event: EventRecord, input: EventFields, late: boolean): Promise<RecordedEvent> {
    try {
      await this.events.insert(event);
    } catch (error) {
      if (!(error instanceof UniqueConstraintError) || input.externalEventId === undefined) throw error;
      return { profileId: event.profileId, eventId: event.id, duplicate: true, late };
    }
    return { profileId: event.profileId, eventId: event.id, duplicate: false, late };
  }
}
