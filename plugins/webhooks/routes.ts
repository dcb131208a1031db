import { defineRoute, forbidden, jsonBodyCheckedBy, reply, type AnyRoute, type Principal } from "../../src/index.ts";
import { createDocs, deleteDocs, listDocs, updateDocs } from "./openapi.ts";
import { createWebhookSchema, updateWebhookSchema } from "./schemas.ts";
import type { WebhookOwner, WebhookRegistry } from "./webhook-registry.ts";
import { listedWebhookView, webhookView } from "./wire.ts";

const auth = { kind: "api", anyOfScopes: ["webhooks:write"] } as const;

/** The owner of the caller's webhooks: its company and the application its token belongs to. */
function ownerOf(principal: Principal): WebhookOwner {
  if (principal.applicationId === undefined) throw forbidden("this token belongs to no application; webhooks need an application's API key or OAuth token");
  return { companyId: principal.companyId, applicationId: principal.applicationId };
}

/** `GET|POST /v1/webhooks`, `PUT|DELETE /v1/webhooks/{webhookId}`, scope `webhooks:write`. */
export function webhookRoutes(registry: WebhookRegistry): AnyRoute[] {
  return [
    defineRoute({
      method: "GET",
      path: "/v1/webhooks",
      auth,
      summary: "List webhooks",
      docs: listDocs,
      handler: async ({ principal }) => reply.json(200, { webhooks: (await registry.list(ownerOf(principal))).map(listedWebhookView) }),
    }),
    defineRoute({
      method: "POST",
      path: "/v1/webhooks",
      auth,
      body: jsonBodyCheckedBy(createWebhookSchema),
      summary: "Create a webhook",
      docs: createDocs,
      handler: async ({ principal, body }) => reply.json(201, webhookView(await registry.create({ ...ownerOf(principal), credentialKind: principal.kind }, body))),
    }),
    defineRoute({
      method: "PUT",
      path: "/v1/webhooks/:webhookId",
      auth,
      body: jsonBodyCheckedBy(updateWebhookSchema),
      summary: "Update a webhook",
      docs: updateDocs,
      handler: async ({ principal, params, body }) => reply.json(200, webhookView(await registry.update(ownerOf(principal), params.webhookId!, body))),
    }),
    defineRoute({
      method: "DELETE",
      path: "/v1/webhooks/:webhookId",
      auth,
      summary: "Delete a webhook",
      docs: deleteDocs,
      async handler({ principal, params }) {
        await registry.delete(ownerOf(principal), params.webhookId!);
        return reply.empty(204);
      },
    }),
  ];
}
