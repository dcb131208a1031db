import {
  GraphQLBoolean,
  GraphQLEnumType,
  GraphQLError,
  GraphQLID,
  GraphQLList,
  GraphQLNonNull,
  type GraphQLNullableType,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
} from "graphql";
import type { Accounts, Company, Scope } from "../../src/index.ts";
import { E164, type SubscriptionEligibility, type UserRef } from "../subscriptions/index.ts";
import type { EligibilityBatch } from "./eligibility-batch.ts";
import { profileFields, type ProfileFieldsContext } from "./profile-fields.ts";

/** What every resolver sees: the caller's company, never another. */
export interface GraphqlContext extends ProfileFieldsContext {
  companyId: string;
  scopes: ReadonlySet<Scope>;
  /** Eligibility lookups of this request, batched. */
  eligibilities: EligibilityBatch;
  accounts: Accounts;
}

const READ_SCOPES: readonly Scope[] = ["subscriptions:read", "subscriptions:write"];
const MAX_EMAIL_LENGTH = 254;

const badInput = (message: string) => new GraphQLError(message, { extensions: { code: "BAD_USER_INPUT" } });

const nonNull = <T extends GraphQLNullableType>(type: T) => new GraphQLNonNull(type);

const SubscriptionChannel = new GraphQLEnumType({
  name: "SubscriptionChannel",
  values: { CHANNEL_TEXT: { value: "TEXT" }, CHANNEL_EMAIL: { value: "EMAIL" } },
});

const SubscriptionType = new GraphQLEnumType({
  name: "SubscriptionType",
  values: { TYPE_MARKETING: { value: "MARKETING" }, TYPE_TRANSACTIONAL: { value: "TRANSACTIONAL" }, TYPE_CHECKOUT_ABANDONED: { value: "CHECKOUT_ABANDONED" } },
});

const IneligibilityReason = new GraphQLEnumType({
  name: "IneligibilityReason",
  values: {
    INELIGIBILITY_REASON_OPTED_OUT: { value: "OPTED_OUT", description: "The user unsubscribed." },
    INELIGIBILITY_REASON_NOT_FULLY_OPTED_IN: { value: "NOT_FULLY_OPTED_IN", description: "A text opt-in waits for the user's Y reply." },
  },
});

const Subscription = new GraphQLObjectType({
  name: "Subscription",
  fields: { channel: { type: nonNull(SubscriptionChannel) }, type: { type: nonNull(SubscriptionType) } },
});

const Eligibility = new GraphQLObjectType({
  name: "Eligibility",
  fields: { isEligible: { type: nonNull(GraphQLBoolean) }, ineligibilityReason: { type: IneligibilityReason } },
});

const SubscriptionEligibilityType = new GraphQLObjectType<SubscriptionEligibility>({
  name: "SubscriptionEligibility",
  fields: { subscription: { type: nonNull(Subscription) }, eligibility: { type: nonNull(Eligibility) } },
});

const Subscriptions = new GraphQLObjectType<{ subscriptionEligibilities: SubscriptionEligibility[] }>({
  name: "Subscriptions",
  fields: { subscriptionEligibilities: { type: nonNull(new GraphQLList(nonNull(SubscriptionEligibilityType))) } },
});

const User = new GraphQLObjectType<UserRef, GraphqlContext>({
  name: "User",
  description: "A visitor of the company's site, by phone and/or email; need not be subscribed.",
  fields: {
    phone: { type: GraphQLString },
    email: { type: GraphQLString },
    subscriptions: {
      type: nonNull(Subscriptions),
      resolve: async (user, _args, context) => ({ subscriptionEligibilities: await context.eligibilities.load(user) }),
    },
    ...profileFields<GraphqlContext>(),
  },
});

const CompanyType = new GraphQLObjectType<Company, GraphqlContext>({
  name: "Company",
  fields: {
    id: { type: nonNull(GraphQLID) },
    name: { type: nonNull(GraphQLString) },
    user: {
      type: User,
      description: "A user of this company by phone (E.164) or email; one of them is required. Aliases fetch several.",
      args: { phone: { type: GraphQLString }, email: { type: GraphQLString } },
      resolve: (_company, args: { phone?: string | null; email?: string | null }, context): UserRef => {
        if (!READ_SCOPES.some((scope) => context.scopes.has(scope))) {
          throw new GraphQLError("the token lacks the scope subscriptions:read", { extensions: { code: "FORBIDDEN" } });
        }
        return userOf(args);
      },
    },
  },
});

const InstalledApplication = new GraphQLObjectType<object, GraphqlContext>({
  name: "InstalledApplication",
  fields: {
    installerCompany: {
      type: nonNull(CompanyType),
      resolve: async (_application, _args, context) => {
        const company = await context.accounts.getCompany(context.companyId);
        if (!company) throw new GraphQLError("the installing company no longer exists", { extensions: { code: "NOT_FOUND" } });
        return company;
      },
    },
  },
});

const Viewer = new GraphQLObjectType({
  name: "Viewer",
  fields: { installedApplication: { type: InstalledApplication, resolve: () => ({}) } },
});

/** The graph of interface 4.1: viewer > installedApplication > installerCompany > user > subscriptions. */
export const schema = new GraphQLSchema({
  query: new GraphQLObjectType({ name: "Query", fields: { viewer: { type: nonNull(Viewer), resolve: () => ({}) } } }),
});

function userOf(args: { phone?: string | null; email?: string | null }): UserRef {
  const user: UserRef = {};
  if (args.phone !== undefined && args.phone !== null) {
    if (!E164.test(args.phone)) throw badInput("phone must be E.164: + and the country code, then digits only (e.g. +19148440001)");
    user.phone = args.phone;
  }
  if (args.email !== undefined && args.email !== null) {
    if (args.email.length > MAX_EMAIL_LENGTH || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(args.email)) throw badInput("email must be an email address");
    user.email = args.email.toLowerCase();
  }
  if (user.phone === undefined && user.email === undefined) throw badInput("user needs a phone or an email argument");
  return user;
}
