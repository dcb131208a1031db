import { defineRoute, jsonBodyCheckedBy, reply, type AnyRoute } from "../../src/index.ts";
import { createDocs, fetchDocs, legacyDocs } from "./openapi.ts";
import type { PrivacyRequests } from "./privacy-requests.ts";
import { privacyRequestSchema, type PrivacyRequestInput } from "./schemas.ts";
import { createdView, fetchedView, legacyView } from "./wire.ts";

/** Bodies are validated by the service, so HTTP and in-process callers share one code path. */
const requestBody = jsonBodyCheckedBy(privacyRequestSchema);

export function privacyRoutes(requests: PrivacyRequests): AnyRoute[] {
  return [
    defineRoute({
      method: "POST",
      path: "/v1/privacy/delete-request",
      auth: { kind: "api", anyOfScopes: ["privacy_requests:write"] },
      body: requestBody,
      summary: "Create a privacy request",
      docs: createDocs,
      handler: async ({ principal, body }) => reply.json(200, createdView(await requests.create(principal.companyId, body as PrivacyRequestInput, "v1"))),
    }),
    defineRoute({
      method: "GET",
      path: "/v1/privacy/delete-request/:id",
      auth: { kind: "api", anyOfScopes: ["privacy_requests:read"] },
      summary: "Get a privacy request",
      docs: fetchDocs,
      handler: async ({ principal, params }) => reply.json(200, fetchedView(await requests.get(principal.companyId, params.id!))),
    }),
    defineRoute({
      method: "POST",
      path: "/privacy/delete-request",
      host: "tactical",
      auth: { kind: "legacy" },
      body: requestBody,
      summary: "Create a privacy request (legacy)",
      docs: legacyDocs,
      async handler({ principal, body }) {
        const request = await requests.create(principal.companyId, body as PrivacyRequestInput, "legacy");
        return reply.json(202, legacyView(request, await requests.affiliateUserId(principal.companyId)));
      },
    }),
  ];
}
