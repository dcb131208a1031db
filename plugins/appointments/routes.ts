import * as v from "valibot";
import { defineRoute, jsonBody, reply, type AnyRoute } from "../../src/http/route.ts";
import type { AppointmentsService } from "./appointments-service.ts";

/** The body is validated by the service, so HTTP and in-process callers share one code path. */
const anyJson = jsonBody(v.unknown());
const host = "tactical" as const;
const auth = { kind: "legacy" } as const;

/** The tactical host's appointment routes (interface 4.14, 4.15; types and GET reminder: wire-compat and reachkit). */
export function appointmentRoutes(service: AppointmentsService): AnyRoute[] {
  const { types, messages, reminders } = service;
  return [
    defineRoute({
      method: "POST",
      path: "/events/types",
      host,
      auth,
      body: anyJson,
      summary: "Create an appointment type: {type} → {uuid, type}",
      handler: async ({ principal, body }) => reply.json(200, await types.create(principal.companyId, body)),
    }),
    defineRoute({
      method: "GET",
      path: "/events/types/:uuid",
      host,
      auth,
      summary: "Read an appointment type",
      handler: async ({ principal, params }) => reply.json(200, await types.get(principal.companyId, params.uuid!)),
    }),
    defineRoute({
      method: "POST",
      path: "/events/types/messages",
      host,
      auth,
      body: anyJson,
      summary: "Create the message of an appointment type for one messageType (interface 4.14)",
      handler: async ({ principal, body }) => reply.json(200, await messages.create(principal.companyId, body)),
    }),
    defineRoute({
      method: "GET",
      path: "/events/types/messages/:uuid",
      host,
      auth,
      summary: "Read an appointment message",
      handler: async ({ principal, params }) => reply.json(200, await messages.get(principal.companyId, params.uuid!)),
    }),
    defineRoute({
      method: "PUT",
      path: "/events/types/messages/:uuid",
      host,
      auth,
      body: anyJson,
      summary: "Update an appointment message with any subset of its fields",
      handler: async ({ principal, params, body }) => reply.json(200, await messages.update(principal.companyId, params.uuid!, body)),
    }),
    defineRoute({
      method: "POST",
      path: "/events/reminders",
      host,
      auth,
      body: anyJson,
      summary: "Create a reminder: confirmation now, reminder and follow-up later (interface 4.15)",
      handler: async ({ principal, body }) => reply.json(200, await reminders.create(principal.companyId, body)),
    }),
    defineRoute({
      method: "GET",
      path: "/events/reminders/:uuid",
      host,
      auth,
      summary: "Read a reminder, its state and each step's send status (reachkit addition)",
      handler: async ({ principal, params }) => reply.json(200, await reminders.get(principal.companyId, params.uuid!)),
    }),
    defineRoute({
      method: "PUT",
      path: "/events/reminders/:uuid",
      host,
      auth,
      body: anyJson,
      summary: "Update a reminder with any subset of its fields; pending sends are planned again",
      handler: async ({ principal, params, body }) => reply.json(200, await reminders.update(principal.companyId, params.uuid!, body)),
    }),
    defineRoute({
      method: "POST",
      path: "/events/reminders/:uuid/cancel",
      host,
      auth,
      summary: "Cancel a reminder: pending sends removed, cancellation sent",
      handler: async ({ principal, params }) => reply.json(200, await reminders.cancel(principal.companyId, params.uuid!)),
    }),
    defineRoute({
      method: "POST",
      path: "/events/reminders/:uuid/no-show",
      host,
      auth,
      summary: "Send the no-show message; the follow-up is dropped",
      handler: async ({ principal, params }) => reply.json(200, await reminders.noShow(principal.companyId, params.uuid!)),
    }),
  ];
}
