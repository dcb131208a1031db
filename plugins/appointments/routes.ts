import { defineRoute, jsonBodyCheckedBy, reply, type AnyRoute } from "../../src/index.ts";
import type { AppointmentsService } from "./appointments-service.ts";
import { TimeZoneNames } from "./event-time.ts";
import * as docs from "./openapi.ts";
import { createMessageSchema, createTypeSchema, reminderSchemas, updateMessageSchema } from "./schemas.ts";

// Bodies are validated by the service (jsonBodyCheckedBy), so HTTP and in-process callers share one code path.
const host = "tactical" as const;
const auth = { kind: "legacy" } as const;

/** The tactical host's appointment routes (interface 4.14, 4.15; types and GET reminder: wire-compat and reachkit). */
export function appointmentRoutes(service: AppointmentsService): AnyRoute[] {
  const { types, messages, reminders } = service;
  const reminderBodies = reminderSchemas(new TimeZoneNames());
  return [
    defineRoute({
      method: "POST",
      path: "/events/types",
      host,
      auth,
      body: jsonBodyCheckedBy(createTypeSchema),
      summary: "Create an appointment type",
      docs: docs.createTypeDocs,
      handler: async ({ principal, body }) => reply.json(200, await types.create(principal.companyId, body)),
    }),
    defineRoute({
      method: "GET",
      path: "/events/types/:uuid",
      host,
      auth,
      summary: "Get an appointment type",
      docs: docs.getTypeDocs,
      handler: async ({ principal, params }) => reply.json(200, await types.get(principal.companyId, params.uuid!)),
    }),
    defineRoute({
      method: "POST",
      path: "/events/types/messages",
      host,
      auth,
      body: jsonBodyCheckedBy(createMessageSchema),
      summary: "Create an appointment message",
      docs: docs.createMessageDocs,
      handler: async ({ principal, body }) => reply.json(200, await messages.create(principal.companyId, body)),
    }),
    defineRoute({
      method: "GET",
      path: "/events/types/messages/:uuid",
      host,
      auth,
      summary: "Get an appointment message",
      docs: docs.getMessageDocs,
      handler: async ({ principal, params }) => reply.json(200, await messages.get(principal.companyId, params.uuid!)),
    }),
    defineRoute({
      method: "PUT",
      path: "/events/types/messages/:uuid",
      host,
      auth,
      body: jsonBodyCheckedBy(updateMessageSchema),
      summary: "Update an appointment message",
      docs: docs.updateMessageDocs,
      handler: async ({ principal, params, body }) => reply.json(200, await messages.update(principal.companyId, params.uuid!, body)),
    }),
    defineRoute({
      method: "POST",
      path: "/events/reminders",
      host,
      auth,
      body: jsonBodyCheckedBy(reminderBodies.create),
      summary: "Create a reminder",
      docs: docs.createReminderDocs,
      handler: async ({ principal, body }) => reply.json(200, await reminders.create(principal.companyId, body)),
    }),
    defineRoute({
      method: "GET",
      path: "/events/reminders/:uuid",
      host,
      auth,
      summary: "Get a reminder",
      docs: docs.getReminderDocs,
      handler: async ({ principal, params }) => reply.json(200, await reminders.get(principal.companyId, params.uuid!)),
    }),
    defineRoute({
      method: "PUT",
      path: "/events/reminders/:uuid",
      host,
      auth,
      body: jsonBodyCheckedBy(reminderBodies.update),
      summary: "Update a reminder",
      docs: docs.updateReminderDocs,
      handler: async ({ principal, params, body }) => reply.json(200, await reminders.update(principal.companyId, params.uuid!, body)),
    }),
    defineRoute({
      method: "POST",
      path: "/events/reminders/:uuid/cancel",
      host,
      auth,
      summary: "Cancel a reminder",
      docs: docs.cancelReminderDocs,
      handler: async ({ principal, params }) => reply.json(200, await reminders.cancel(principal.companyId, params.uuid!)),
    }),
    defineRoute({
      method: "POST",
      path: "/events/reminders/:uuid/no-show",
      host,
      auth,
      summary: "Send the no-show message",
      docs: docs.noShowDocs,
      handler: async ({ principal, params }) => reply.json(200, await reminders.noShow(principal.companyId, params.uuid!)),
    }),
  ];
}
