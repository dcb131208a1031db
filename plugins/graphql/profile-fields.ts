import {
  GraphQLBoolean,
  GraphQLEnumType,
  GraphQLError,
  GraphQLFloat,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  type GraphQLNullableType,
  GraphQLObjectType,
  GraphQLScalarType,
  GraphQLString,
  type GraphQLFieldConfigMap,
} from "graphql";
import { MAX_PAGE_SIZE, timelineCursor, type EventRecord, type ProfilesService, type ProfileView } from "../profiles/index.ts";
import type { UserRef } from "../subscriptions/index.ts";

const nonNull = <T extends GraphQLNullableType>(type: T) => new GraphQLNonNull(type);
const badInput = (message: string) => new GraphQLError(message, { extensions: { code: "BAD_USER_INPUT" } });

/** Events a connection answers when `first` is not given. */
export const DEFAULT_EVENTS_PAGE = 20;

/**
 * The profiles of one request's users, each looked up once however many
 * fields ask for it: by the phone, else by the email.
 */
export class ProfileReader {
  readonly #profiles = new Map<string, Promise<ProfileView | undefined>>();

  constructor(
    private readonly service: ProfilesService,
    private readonly companyId: string,
  ) {}

  profile(user: UserRef): Promise<ProfileView | undefined> {
    const key = `${user.phone ?? ""}\u0000${user.email ?? ""}`;
    let found = this.#profiles.get(key);
    if (!found) this.#profiles.set(key, (found = this.#find(user)));
    return found;
  }

  events(profileId: string, first: number, after: string | undefined) {
    return this.service.events(this.companyId, profileId, { first, after });
  }

  async #find(user: UserRef): Promise<ProfileView | undefined> {
    const byPhone = user.phone === undefined ? undefined : await this.service.show(this.companyId, { kind: "phone", value: user.phone });
    return byPhone ?? (user.email === undefined ? undefined : this.service.show(this.companyId, { kind: "email", value: user.email }));
  }
}

/** Any JSON value, as an event's properties were sent. */
const JsonScalar = new GraphQLScalarType({
  name: "JSON",
  description: "A JSON value, as it was sent.",
  serialize: (value) => value,
});

/** A custom attribute's value: a string, a number or a boolean, typed by the first value the company set. */
const AttributeValueScalar = new GraphQLScalarType({
  name: "AttributeValue",
  description: "A string, a number or a boolean.",
  serialize: (value) => value,
});

const CustomIdentifier = new GraphQLObjectType({
  name: "CustomIdentifier",
  fields: { name: { type: nonNull(GraphQLString) }, value: { type: nonNull(GraphQLString) } },
});

const ExternalIdentifiers = new GraphQLObjectType({
  name: "ExternalIdentifiers",
  description: "The person's ids in other systems; of several of one kind, the latest linked.",
  fields: {
    clientUserId: { type: GraphQLString },
    shopifyId: { type: GraphQLString },
    klaviyoId: { type: GraphQLString },
    customIdentifiers: { type: nonNull(new GraphQLList(nonNull(CustomIdentifier))) },
  },
});

const CustomAttribute = new GraphQLObjectType({
  name: "CustomAttribute",
  fields: {
    name: { type: nonNull(GraphQLString) },
    value: { type: nonNull(AttributeValueScalar) },
    setAt: { type: nonNull(GraphQLString), resolve: (attribute: { setAt: number }) => new Date(attribute.setAt).toISOString() },
  },
});

const EventKind = new GraphQLEnumType({
  name: "EventKind",
  values: { CUSTOM: { value: "custom" }, PRODUCT_VIEW: { value: "product_view" }, ADD_TO_CART: { value: "add_to_cart" }, PURCHASE: { value: "purchase" } },
});

const Price = new GraphQLObjectType({
  name: "Price",
  fields: { value: { type: nonNull(GraphQLFloat) }, currency: { type: nonNull(GraphQLString) } },
});

const Product = new GraphQLObjectType({
  name: "EventProduct",
  fields: {
    productId: { type: nonNull(GraphQLString) },
    productVariantId: { type: nonNull(GraphQLString) },
    name: { type: GraphQLString },
    productUrl: { type: GraphQLString },
    productImage: { type: GraphQLString },
    quantity: { type: GraphQLInt },
    price: { type: nonNull(new GraphQLList(nonNull(Price))) },
  },
});

const Event = new GraphQLObjectType<EventRecord>({
  name: "Event",
  description: "A custom or ecommerce event of the person.",
  fields: {
    id: { type: nonNull(GraphQLString) },
    kind: { type: nonNull(EventKind) },
    type: { type: GraphQLString, description: "The type of a custom event." },
    occurredAt: { type: nonNull(GraphQLString), resolve: (event) => new Date(event.occurredAt).toISOString() },
    receivedAt: { type: nonNull(GraphQLString), resolve: (event) => new Date(event.receivedAt).toISOString() },
    externalEventId: { type: GraphQLString },
    properties: { type: JsonScalar },
    items: { type: new GraphQLList(nonNull(Product)) },
    orderId: { type: GraphQLString },
    salesChannel: { type: GraphQLString, resolve: (event) => event.salesChannel?.channelType },
    triggered: { type: nonNull(GraphQLBoolean), description: "false for an event older than 12 hours when it arrived.", resolve: (event) => !event.late },
  },
});

const PageInfo = new GraphQLObjectType({
  name: "PageInfo",
  fields: {
    hasNextPage: { type: nonNull(GraphQLBoolean) },
    hasPreviousPage: { type: nonNull(GraphQLBoolean) },
    startCursor: { type: GraphQLString },
    endCursor: { type: GraphQLString },
  },
});

const EventEdge = new GraphQLObjectType({
  name: "EventEdge",
  fields: { cursor: { type: nonNull(GraphQLString) }, node: { type: nonNull(Event) } },
});

const EventConnection = new GraphQLObjectType({
  name: "EventConnection",
  fields: { edges: { type: nonNull(new GraphQLList(nonNull(EventEdge))) }, pageInfo: { type: nonNull(PageInfo) } },
});

const encodeCursor = (event: EventRecord) => Buffer.from(timelineCursor(event)).toString("base64url");

function decodeCursor(cursor: string): string {
  const position = /^[A-Za-z0-9_-]{1,400}$/.test(cursor) ? Buffer.from(cursor, "base64url").toString() : "";
  if (!/^\d{13}\S+$/.test(position)) throw badInput("after is not a cursor of this connection");
  return position;
}

const emptyConnection = { edges: [], pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null } };

/** What the User type's profile fields need from the request's context. */
export interface ProfileFieldsContext {
  /** Absent when the kit has no profiles plugin: the fields then answer as for an unknown person. */
  profiles?: ProfileReader;
}

/** The User fields read from the person's profile: `externalIdentifiers`, `attributes`, `events(first:, after:)`. */
export function profileFields<TContext extends ProfileFieldsContext>(): GraphQLFieldConfigMap<UserRef, TContext> {
  const profileOf = (user: UserRef, context: TContext) => context.profiles?.profile(user) ?? Promise.resolve(undefined);
  return {
    externalIdentifiers: {
      type: nonNull(ExternalIdentifiers),
      resolve: async (user, _args, context) => (await profileOf(user, context))?.externalIdentifiers ?? { customIdentifiers: [] },
    },
    attributes: {
      type: nonNull(new GraphQLList(nonNull(CustomAttribute))),
      description: "Custom attributes, by name.",
      resolve: async (user, _args, context) => (await profileOf(user, context))?.attributes ?? [],
    },
    events: {
      type: nonNull(EventConnection),
      description: `The person's events, newest first by when they occurred: a Relay connection (first: at most ${MAX_PAGE_SIZE}, default ${DEFAULT_EVENTS_PAGE}).`,
      args: { first: { type: GraphQLInt }, after: { type: GraphQLString } },
      resolve: async (user, args: { first?: number | null; after?: string | null }, context) => {
        const first = args.first ?? DEFAULT_EVENTS_PAGE;
        if (first < 0 || first > MAX_PAGE_SIZE) throw badInput(`first must be from 0 to ${MAX_PAGE_SIZE}`);
        const after = args.after === undefined || args.after === null ? undefined : decodeCursor(args.after);
        const profile = await profileOf(user, context);
        if (!profile || !context.profiles) return emptyConnection;
        const page = await context.profiles.events(profile.id, first, after);
        const edges = page.events.map((event) => ({ cursor: encodeCursor(event), node: event }));
        return {
          edges,
          pageInfo: { hasNextPage: page.hasNextPage, hasPreviousPage: after !== undefined, startCursor: edges[0]?.cursor ?? null, endCursor: edges.at(-1)?.cursor ?? null },
        };
      },
    },
  };
}
