import * as v from "valibot";
import type { RouteDocs } from "../../src/index.ts";

const TAG = "Privacy requests";
const ID = "5b23e86b-cbca-4517-a4c2-94fa5a32c2c6";
const REQUESTED = "2026-03-01T12:00:01.000+0000";
const timestamp = (description: string) => v.pipe(v.string(), v.description(`${description}: 2020-09-02T17:44:23.875+0000`));

const request = {
  processed: v.boolean(),
  type: v.literal("DELETE"),
  subjectEmail: v.optional(v.string()),
  requestMsg: v.optional(v.string()),
  requestDateTime: timestamp("When it was asked"),
};

export const createDocs: RouteDocs = {
  operationId: "addDeleteRequest",
  tag: TAG,
  description: "Asks for a subject's data to be deleted: a phone, an email, or both. A durable job deletes every record of the company that matches, within thirty days (at once by default).",
  responses: {
    200: {
      description: "Created, not processed yet",
      schema: v.object({ id: v.string(), ...request, subjectPhone: v.optional(v.string()) }),
      example: { id: ID, processed: false, type: "DELETE", subjectPhone: "+13125550133", requestMsg: "Customer asked by email", requestDateTime: REQUESTED },
    },
  },
  example: { body: { subjectPhone: "+13125550133", requestMsg: "Customer asked by email" } },
};

export const fetchDocs: RouteDocs = {
  operationId: "getDeleteRequest",
  tag: TAG,
  description: "A privacy request of the company, the subject masked while it waits, with the processing times once processed.",
  params: { id: "The id the create answered" },
  responses: {
    200: {
      description: "The request",
      schema: v.object({
        id: v.string(),
        ...request,
        subjectPhone: v.optional(v.string()),
        processingStartDateTime: v.optional(timestamp("When processing started")),
        processingEndDateTime: v.optional(timestamp("When processing ended")),
      }),
      example: { id: ID, processed: false, type: "DELETE", subjectPhone: "+*****0133", requestMsg: "Customer asked by email", requestDateTime: REQUESTED },
    },
    404: { description: "No privacy request of the company has this id" },
  },
  example: { params: { id: ID }, after: ["addDeleteRequest"] },
};

export const legacyDocs: RouteDocs = {
  operationId: "addLegacyDeleteRequest",
  tag: TAG,
  description: "The legacy privacy request, on the tactical host: the same request, answered 202 with integer ids and the phone under `subjectphone`.",
  responses: {
    202: {
      description: "Accepted",
      schema: v.object({ id: v.number(), affiliateUserId: v.number(), ...request, subjectphone: v.optional(v.string()) }),
      example: { id: 2, affiliateUserId: 1681408424, processed: false, type: "DELETE", subjectEmail: "old@example.com", requestMsg: "Ticket 77", requestDateTime: REQUESTED },
    },
  },
  example: { body: { subjectEmail: "old@example.com", requestMsg: "Ticket 77" } },
};
