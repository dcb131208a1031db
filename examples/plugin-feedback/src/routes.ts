import { defineRoute, jsonBody, reply, type AnyRoute } from "reachkit";
import * as v from "valibot";
import type { FeedbackService } from "./feedback-service.js";

/** Checked by the core before the handler runs: a bad field answers 400 naming it. */
const feedbackBody = v.object({
  phone: v.pipe(v.string(), v.regex(/^\+[1-9]\d{6,14}$/, "must be E.164: + and digits only")),
  rating: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(5)),
  comment: v.optional(v.pipe(v.string(), v.maxLength(1000))),
});

export function feedbackRoutes(feedback: FeedbackService): AnyRoute[] {
  return [
    defineRoute({
      method: "POST",
      path: "/v1/feedback",
      auth: { kind: "api" },
      body: jsonBody(feedbackBody),
      summary: "Leave feedback",
      handler: async ({ principal, body }) => reply.json(202, await feedback.receive(principal.companyId, body)),
    }),
    defineRoute({
      method: "GET",
      path: "/v1/feedback/:id",
      auth: { kind: "api" },
      summary: "Get feedback",
      handler: async ({ principal, params }) => reply.json(200, await feedback.get(principal.companyId, params.id!)),
    }),
  ];
}
