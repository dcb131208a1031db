import * as v from "valibot";
import type { RouteDocs } from "../../src/index.ts";

const QUERY = `query Eligibility($phone: String!) {
  viewer {
    installedApplication {
      installerCompany {
        id
        name
        user(phone: $phone) {
          subscriptions { subscriptionEligibilities { subscription { channel type } eligibility { isEligible ineligibilityReason } } }
        }
      }
    }
  }
}`;

export const graphqlDocs: RouteDocs = {
  operationId: "queryGraphql",
  tag: "GraphQL",
  description:
    "The graph query endpoint: `viewer > installedApplication > installerCompany > user(phone | email) > subscriptions > subscriptionEligibilities`. " +
    "GraphQL errors answer 200 with `errors` (GraphQL's convention); every answer carries `extensions.traceId`. Any valid v1 token.",
  responses: {
    200: {
      description: "The data the query selected, and GraphQL errors if any",
      schema: v.object({
        data: v.optional(v.nullable(v.record(v.string(), v.unknown()))),
        errors: v.optional(v.array(v.object({ message: v.string() }))),
        extensions: v.object({ traceId: v.string() }),
      }),
      example: {
        data: {
          viewer: {
            installedApplication: {
              installerCompany: {
                id: "5dee4a05-3194-4aab-a688-5ec87bedad2f",
                name: "Acme",
                user: {
                  subscriptions: {
                    subscriptionEligibilities: [
                      { subscription: { channel: "CHANNEL_TEXT", type: "TYPE_MARKETING" }, eligibility: { isEligible: true, ineligibilityReason: null } },
                    ],
                  },
                },
              },
            },
          },
        },
        extensions: { traceId: "4f5cf1fe-655b-4916-8919-7f7773943e51" },
      },
    },
  },
  example: { body: { query: QUERY, variables: { phone: "+13125550100" } }, after: ["addSubscriptions"] },
};
