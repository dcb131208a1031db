import { defineRoute, jsonBodyCheckedBy, reply, type AnyRoute, type OutboxMessage } from "../../src/index.ts";
import type { LegacyService } from "./legacy-service.ts";
import { addSubscriberDocs, archivedMessageDocs, removeSubscriberDocs, transactionalMessageDocs } from "./openapi.ts";
import {
  addSubscriberSchema,
  archivedMessageSchema,
  removeSubscriberSchema,
  transactionalMessageSchema,
  type AddSubscriberRequest,
  type ArchivedMessageRequest,
  type RemoveSubscriberRequest,
  type TransactionalMessageRequest,
} from "./schemas.ts";

// Bodies are validated by the service (jsonBodyCheckedBy), so HTTP and in-process callers share one code path.
/** Interface 4.9 and 4.10 answer a bad token with 403; the other legacy routes with 401 (§7). */
const legacyToken = { kind: "legacy" } as const;
const legacyToken403 = { kind: "legacy", invalidTokenStatus: 403 } as const;

const messageReply = (message: OutboxMessage) =>
  reply.json(200, { id: message.id, to: message.to, body: message.body, ...(message.mediaUrl ? { mediaUrl: message.mediaUrl } : {}), status: message.status });

export function legacyRoutes(service: LegacyService): AnyRoute[] {
  return [
    defineRoute({
      method: "POST",
      path: "/1/add-subscribers",
      auth: legacyToken,
      body: jsonBodyCheckedBy(addSubscriberSchema),
      summary: "Add a subscriber",
      docs: addSubscriberDocs,
      async handler({ principal, body }) {
        const added = await service.addSubscriber(principal.companyId, body as AddSubscriberRequest);
        return reply.json(added.created ? 201 : 200, added);
      },
    }),
    defineRoute({
      method: "POST",
      path: "/1/subscribers/unsubscribe",
      auth: legacyToken,
      body: jsonBodyCheckedBy(removeSubscriberSchema),
      summary: "Remove a subscriber",
      docs: removeSubscriberDocs,
      handler: async ({ principal, body }) => reply.json(200, await service.removeSubscriber(principal.companyId, body as RemoveSubscriberRequest)),
    }),
    defineRoute({
      method: "POST",
      path: "/1/messages",
      auth: legacyToken403,
      body: jsonBodyCheckedBy(transactionalMessageSchema),
      summary: "Send a transactional message",
      docs: transactionalMessageDocs,
      handler: async ({ principal, body }) => messageReply(await service.sendTransactional(principal.companyId, body as TransactionalMessageRequest)),
    }),
    defineRoute({
      method: "POST",
      // The main host has no /v1/messages route, so one router serves both hosts.
      path: "/v1/messages",
      host: "messages",
      auth: legacyToken403,
      body: jsonBodyCheckedBy(archivedMessageSchema),
      summary: "Send a message (archived endpoint)",
      docs: archivedMessageDocs,
      async handler({ principal, body }) {
        const input = body as ArchivedMessageRequest;
        await service.sendArchived(principal.companyId, input);
        return reply.json(200, { to: input.to, body: input.body, ...(input.messageId !== undefined ? { messageId: input.messageId } : {}) });
      },
    }),
  ];
}
