import * as v from "valibot";
import { defineRoute, jsonBody, reply, type AnyRoute } from "../../src/http/route.ts";
import type { PrivacyRequests } from "./privacy-requests.ts";
import type { PrivacyRequestInput } from "./schemas.ts";
import { createdView, fetchedView, legacyView } from "./wire.ts";

/** Bodies are validated by the service, so HTTP and in-process callers share one code path. */
const anyJson = jsonBody(v.unknown());

export function privacyRoutes(requests: PrivacyRequests): AnyRoute[] {
  return [
    defineRoute({
      method: "POST",
      path: "/v1/privacy/delete-request",
      auth: { kind: "api", anyOfScopes: ["privacy_requests:write"] },
      body: anyJson,
      summary: "Ask for a subject's data to be deleted (interface 4.12); processed by a durable job",
      handler: async ({ principal, body }) => reply.json(200, createdView(await requests.create(principal.companyId, body as PrivacyRequestInput, "v1"))),
    }),
    defineRoute({
      method: "GET",
      path: "/v1/privacy/delete-request/:id",
      auth: { kind: "api", anyOfScopes: ["privacy_requests:read"] },
      summary: "A privacy request, the subject masked (interface 4.12)",
      handler: async ({ principal, params }) => reply.json(200, fetchedView(await requests.get(principal.companyId, params.id!))),
    }),
    defineRoute({
      method: "POST",
      path: "/privacy/delete-request",
      host: "tactical",
      auth: { kind: "legacy" },
      body: anyJson,
      summary: "Legacy privacy request (interface 4.11): 202, integer ids",
      async handler({ principal, body }) {
        const request = await requests.create(principal.companyId, body as PrivacyRequestInput, "legacy");
        return reply.json(202, legacyView(request, await requests.affiliateUserId(principal.companyId)));
      },
    }),
  ];
}
