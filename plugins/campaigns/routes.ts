import * as v from "valibot";
import { defineRoute, jsonBody, jsonBodyCheckedBy, plainObject, notFound, reply, type AnyRoute } from "../../src/index.ts";
import { campaignView, createCampaignSchema, isHttpUrl, sendCampaignSchema, updateCampaignSchema, type CreateCampaignRequest, type SendCampaignRequest, type UpdateCampaignRequest } from "./campaigns.ts";
import type { CampaignsService } from "./campaigns-service.ts";
import * as docs from "./openapi.ts";
import type { CampaignRecord, SegmentRecord } from "./records.ts";
import { documentedSegmentSchema, segmentView, updateSegmentSchema, type CreateSegmentRequest, type UpdateSegmentRequest } from "./segments.ts";

const SEGMENTS_READ = { kind: "api", anyOfScopes: ["segments:read", "segments:write"] } as const;
const SEGMENTS_WRITE = { kind: "api", anyOfScopes: ["segments:write"] } as const;
const CAMPAIGNS_READ = { kind: "api", anyOfScopes: ["campaigns:read", "campaigns:write"] } as const;
const CAMPAIGNS_WRITE = { kind: "api", anyOfScopes: ["campaigns:write"] } as const;

const shortLinkSchema = plainObject({ url: v.pipe(v.string("must be a string"), v.maxLength(2048, "must be at most 2048 characters"), v.check(isHttpUrl, "must be an http or https URL")) });

const NO_SEGMENT = "no segment of the company has this id";
const NO_CAMPAIGN = "no campaign of the company has this id";

function found<T>(value: T | undefined, message: string): T {
  if (value === undefined) throw notFound(message);
  return value;
}
const segment = (value: SegmentRecord | undefined) => reply.json(200, segmentView(found(value, NO_SEGMENT)));
const campaign = (value: CampaignRecord | undefined) => reply.json(200, campaignView(found(value, NO_CAMPAIGN)));

/** `/v1/segments` and `/v1/campaigns` (reachkit's own API), and the short links' redirect. Bodies are validated by the service. */
export function campaignRoutes(service: CampaignsService): AnyRoute[] {
  return [
    defineRoute({ method: "POST", path: "/v1/segments", auth: SEGMENTS_WRITE, body: jsonBodyCheckedBy(documentedSegmentSchema), summary: "Create a segment", docs: docs.createSegmentDocs,
      handler: async ({ body, principal }) => reply.json(201, segmentView(await service.createSegment(principal.companyId, body as CreateSegmentRequest))) }),
    defineRoute({ method: "GET", path: "/v1/segments", auth: SEGMENTS_READ, summary: "List segments", docs: docs.listSegmentsDocs,
      handler: async ({ principal }) => reply.json(200, { segments: (await service.listSegments(principal.companyId)).map(segmentView) }) }),
    defineRoute({ method: "GET", path: "/v1/segments/:id", auth: SEGMENTS_READ, summary: "Get a segment", docs: docs.getSegmentDocs,
      handler: async ({ principal, params }) => segment(await service.getSegment(principal.companyId, params.id!)) }),
    defineRoute({ method: "PUT", path: "/v1/segments/:id", auth: SEGMENTS_WRITE, body: jsonBodyCheckedBy(updateSegmentSchema), summary: "Update a segment", docs: docs.updateSegmentDocs,
      handler: async ({ body, principal, params }) => segment(await service.updateSegment(principal.companyId, params.id!, body as UpdateSegmentRequest)) }),
    defineRoute({ method: "DELETE", path: "/v1/segments/:id", auth: SEGMENTS_WRITE, summary: "Delete a segment", docs: docs.deleteSegmentDocs,
      async handler({ principal, params }) {
        found((await service.deleteSegment(principal.companyId, params.id!)) || undefined, NO_SEGMENT);
        return reply.empty(204);
      } }),
    defineRoute({ method: "GET", path: "/v1/segments/:id/preview", auth: SEGMENTS_READ, summary: "A segment's size and a sample", docs: docs.previewSegmentDocs,
      handler: async ({ principal, params }) => reply.json(200, found(await service.previewSegment(principal.companyId, params.id!), NO_SEGMENT)) }),

    defineRoute({ method: "POST", path: "/v1/campaigns", auth: CAMPAIGNS_WRITE, body: jsonBodyCheckedBy(createCampaignSchema), summary: "Create a campaign", docs: docs.createCampaignDocs,
      handler: async ({ body, principal }) => reply.json(201, campaignView(await service.create(principal.companyId, body as CreateCampaignRequest))) }),
    defineRoute({ method: "GET", path: "/v1/campaigns", auth: CAMPAIGNS_READ, summary: "List campaigns", docs: docs.listCampaignsDocs,
      handler: async ({ principal }) => reply.json(200, { campaigns: (await service.list(principal.companyId)).map(campaignView) }) }),
    defineRoute({ method: "GET", path: "/v1/campaigns/:id", auth: CAMPAIGNS_READ, summary: "Get a campaign", docs: docs.getCampaignDocs,
      handler: async ({ principal, params }) => campaign(await service.get(principal.companyId, params.id!)) }),
    defineRoute({ method: "PUT", path: "/v1/campaigns/:id", auth: CAMPAIGNS_WRITE, body: jsonBodyCheckedBy(updateCampaignSchema), summary: "Update a draft campaign", docs: docs.updateCampaignDocs,
      handler: async ({ body, principal, params }) => campaign(await service.update(principal.companyId, params.id!, body as UpdateCampaignRequest)) }),
    defineRoute({ method: "DELETE", path: "/v1/campaigns/:id", auth: CAMPAIGNS_WRITE, summary: "Delete a campaign", docs: docs.deleteCampaignDocs,
      async handler({ principal, params }) {
        found((await service.delete(principal.companyId, params.id!)) || undefined, NO_CAMPAIGN);
        return reply.empty(204);
      } }),
    defineRoute({ method: "POST", path: "/v1/campaigns/:id/send", auth: CAMPAIGNS_WRITE, body: jsonBodyCheckedBy(sendCampaignSchema), summary: "Send or schedule a campaign", docs: docs.sendCampaignDocs,
      handler: async ({ body, principal, params }) => campaign(await service.send(principal.companyId, params.id!, (body ?? {}) as SendCampaignRequest)) }),
    defineRoute({ method: "POST", path: "/v1/campaigns/:id/cancel", auth: CAMPAIGNS_WRITE, summary: "Cancel a campaign", docs: docs.cancelCampaignDocs,
      handler: async ({ principal, params }) => campaign(await service.cancel(principal.companyId, params.id!)) }),
    defineRoute({ method: "GET", path: "/v1/campaigns/:id/estimate", auth: CAMPAIGNS_READ, summary: "How long a campaign will take", docs: docs.estimateCampaignDocs,
      handler: async ({ principal, params }) => reply.json(200, found(await service.estimate(principal.companyId, params.id!), NO_CAMPAIGN)) }),
    defineRoute({ method: "GET", path: "/v1/campaigns/:id/results", auth: CAMPAIGNS_READ, summary: "A campaign's results per variant", docs: docs.resultsCampaignDocs,
      handler: async ({ principal, params }) => reply.json(200, found(await service.campaignResults(principal.companyId, params.id!), NO_CAMPAIGN)) }),

    defineRoute({ method: "POST", path: "/v1/short-links", auth: CAMPAIGNS_WRITE, body: jsonBody(shortLinkSchema), summary: "Shorten a URL", docs: docs.createShortLinkDocs,
      async handler({ body, principal }) {
        const shortUrl = await service.links.shorten(principal.companyId, body.url, { source: "api", channel: "sms" });
        return reply.json(201, { code: shortUrl.slice(shortUrl.lastIndexOf("/") + 1), shortUrl, url: body.url });
      } }),
    defineRoute({ method: "GET", path: "/l/:code", host: "short", auth: { kind: "none" }, summary: "Follow a short link", docs: docs.shortLinkDocs,
      async handler({ params }) {
        const url = await service.links.click(params.code!);
        if (url === undefined) throw notFound("no such link");
        return reply.redirect(url, 302);
      } }),
  ];
}
