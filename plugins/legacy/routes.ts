import * as v from "valibot";
import { defineRoute, jsonBody, reply, type AnyRoute } from "../../src/http/route.ts";
import type { OutboxMessage } from "../../src/messaging/outbox-record.ts";
import type { LegacyService } from "./legacy-service.ts";
import type { AddSubscriberRequest, ArchivedMessageRequest, RemoveSubscriberRequest, TransactionalMessageRequest } from "./schemas.ts";

/** Bodies are validated by the service, so HTTP and in-process callers share one code path. */
const anyJson = jsonBody(v.unknown());
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
      body: anyJson,
      summary: "Legacy add subscriber (interface 4.7): 201 new, 200 existing",
      async handler({ principal, body }) {
        const added = await service.addSubscriber(principal.companyId, body as AddSubscriberRequest);
        return reply.json(added.created ? 201 : 200, added);
      },
    }),
    defineRoute({
      method: "POST",
      path: "/1/subscribers/unsubscribe",
      auth: legacyToken,
      body: anyJson,
      summary: "Legacy remove subscriber (interface 4.8): 200 opted out, 400 unknown, 409 already opted out",
      handler: async ({ principal, body }) => reply.json(200, await service.removeSubscriber(principal.companyId, body as RemoveSubscriberRequest)),
    }),
    defineRoute({
      method: "POST",
      path: "/1/messages",
      auth: legacyToken403,
      body: anyJson,
      summary: "Send a transactional SMS/MMS to an active subscriber (interface 4.10)",
      handler: async ({ principal, body }) => messageReply(await service.sendTransactional(principal.companyId, body as TransactionalMessageRequest)),
    }),
    defineRoute({
      method: "POST",
      // The main host has no /v1/messages route, so one router serves both hosts.
      path: "/v1/messages",
      host: "messages",
      auth: legacyToken403,
      body: anyJson,
      summary: "Archived send message (interface 4.9): echoes to, body and messageId",
      async handler({ principal, body }) {
        const input = body as ArchivedMessageRequest;
        await service.sendArchived(principal.companyId, input);
        return reply.json(200, { to: input.to, body: input.body, ...(input.messageId !== undefined ? { messageId: input.messageId } : {}) });
      },
    }),
  ];
}
