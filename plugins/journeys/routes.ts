import { defineRoute, jsonBodyCheckedBy, notFound, reply, type AnyRoute } from "../../src/index.ts";
import { createJourneySchema, journeyView, updateJourneySchema, type CreateJourneyRequest, type UpdateJourneyRequest } from "./journey-definitions.ts";
import type { JourneysService } from "./journeys-service.ts";
import * as docs from "./openapi.ts";
import type { JourneyRecord } from "./records.ts";

const READ = { kind: "api", anyOfScopes: ["journeys:read", "journeys:write"] } as const;
const WRITE = { kind: "api", anyOfScopes: ["journeys:write"] } as const;

const found = (journey: JourneyRecord | undefined) => {
  if (!journey) throw notFound("no journey of the company has this id");
  return reply.json(200, journeyView(journey));
};

/** `/v1/journeys`: reachkit's own API. Bodies are validated by the service, so HTTP and in-process callers share one code path. */
export function journeyRoutes(service: JourneysService): AnyRoute[] {
  return [
    defineRoute({
      method: "POST",
      path: "/v1/journeys",
      auth: WRITE,
      body: jsonBodyCheckedBy(createJourneySchema),
      summary: "Create a journey",
      docs: docs.createDocs,
      handler: async ({ body, principal }) => reply.json(201, journeyView(await service.create(principal.companyId, body as CreateJourneyRequest))),
    }),
    defineRoute({
      method: "GET",
      path: "/v1/journeys",
      auth: READ,
      summary: "List journeys",
      docs: docs.listDocs,
      handler: async ({ principal }) => reply.json(200, { journeys: (await service.list(principal.companyId)).map(journeyView) }),
    }),
    defineRoute({
      method: "GET",
      path: "/v1/journeys/:id",
      auth: READ,
      summary: "Get a journey",
      docs: docs.getDocs,
      handler: async ({ principal, params }) => found(await service.get(principal.companyId, params.id!)),
    }),
    defineRoute({
      method: "PUT",
      path: "/v1/journeys/:id",
      auth: WRITE,
      body: jsonBodyCheckedBy(updateJourneySchema),
      summary: "Update a journey",
      docs: docs.updateDocs,
      handler: async ({ body, principal, params }) => found(await service.update(principal.companyId, params.id!, body as UpdateJourneyRequest)),
    }),
    defineRoute({
      method: "POST",
      path: "/v1/journeys/:id/pause",
      auth: WRITE,
      summary: "Pause a journey",
      docs: docs.pauseDocs,
      handler: async ({ principal, params }) => found(await service.pause(principal.companyId, params.id!)),
    }),
    defineRoute({
      method: "POST",
      path: "/v1/journeys/:id/resume",
      auth: WRITE,
      summary: "Resume a journey",
      docs: docs.resumeDocs,
      handler: async ({ principal, params }) => found(await service.resume(principal.companyId, params.id!)),
    }),
    defineRoute({
      method: "DELETE",
      path: "/v1/journeys/:id",
      auth: WRITE,
      summary: "Delete a journey",
      docs: docs.deleteDocs,
      async handler({ principal, params }) {
        if (!(await service.delete(principal.companyId, params.id!))) throw notFound("no journey of the company has this id");
        return reply.empty(204);
      },
    }),
    defineRoute({
      method: "GET",
      path: "/v1/journeys/:id/stats",
      auth: READ,
      summary: "A journey's figures",
      docs: docs.statsDocs,
      async handler({ principal, params }) {
        const stats = await service.stats(principal.companyId, params.id!);
        if (!stats) throw notFound("no journey of the company has this id");
        return reply.json(200, stats);
      },
    }),
  ];
}
