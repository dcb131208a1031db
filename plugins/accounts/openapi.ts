import * as v from "valibot";
import type { RouteDocs } from "../../src/index.ts";

/** The provisioned company of the examples (its id is made at provisioning). */
export const EXAMPLE_COMPANY_ID = "5dee4a05-3194-4aab-a688-5ec87bedad2f";

export const meDocs: RouteDocs = {
  operationId: "getMe",
  tag: "Identity",
  description: "Checks a v1 token (an API key or an OAuth access token): which company and application it belongs to. Any valid token, no scope needed.",
  responses: {
    200: {
      description: "The token's company and application",
      schema: v.object({
        applicationName: v.string(),
        attentiveDomainName: v.pipe(v.string(), v.description("The company's domain (the reference service's field name)")),
        companyName: v.string(),
        contactEmail: v.string(),
        companyId: v.string(),
      }),
      example: { applicationName: "Default application", attentiveDomainName: "acme", companyName: "Acme", contactEmail: "", companyId: EXAMPLE_COMPANY_ID },
    },
  },
  example: {},
};
