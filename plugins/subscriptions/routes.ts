import * as v from "valibot";
import {
  defineRoute,
  forbidden,
  formBody,
  HttpError,
  invalidFields,
  jsonBodyCheckedBy,
  reply,
  SMS_SENDER,
  unauthorized,
  type AnyRoute,
  type PluginContext,
} from "../../src/index.ts";
import type { OptInAccepted } from "./opt-ins.ts";
import { eligibilityDocs, inboundSecretPathDocs, inboundSignedDocs, optInDocs, optOutDocs, unsubscribeDocs } from "./openapi.ts";
import { E164, optInRequestSchema, unsubscribeRequestSchema, userFromQuery, type OptInRequest, type UnsubscribeRequest } from "./schemas.ts";
import { INBOUND_PATH, normalizeSenderNumber } from "./sender-numbers.ts";
import type { SubscriptionsService } from "./subscriptions-service.ts";
import type { UnsubscribeAccepted } from "./unsubscribes.ts";

const WRITE = ["subscriptions:write"] as const;
// The reference's own specifications disagree on the scope of the read (wire-compat): either is accepted.
const READ = ["subscriptions:read", "subscriptions:write"] as const;

/** Every form field is kept: provider signatures cover all of them. */
const inboundForm = formBody(v.record(v.string(), v.string()));

const optInReply = (accepted: OptInAccepted) =>
  reply.json(202, {
    user: accepted.user,
    ...(accepted.externalIdentifiers ? { externalIdentifiers: accepted.externalIdentifiers } : {}),
    subscriptionResponses: accepted.subscriptionResponses,
  });

const unsubscribeReply = (accepted: UnsubscribeAccepted) =>
  reply.json(202, { user: accepted.user, subscriptionResponses: accepted.subscriptionResponses });

export function subscriptionRoutes(context: PluginContext, service: SubscriptionsService): AnyRoute[] {
  const sender = context.container.has(SMS_SENDER) ? context.resolve(SMS_SENDER) : undefined;
  return [
    defineRoute({
      method: "POST",
      path: "/v1/subscriptions",
      auth: { kind: "api", anyOfScopes: WRITE },
      // Validated by the service, so HTTP and in-process callers share one code path.
      body: jsonBodyCheckedBy(optInRequestSchema),
      rateLimit: "opt-in",
      summary: "Create subscriptions",
      docs: optInDocs,
      handler: async ({ principal, body }) => optInReply(await service.optIn(principal.companyId, body as OptInRequest, { source: "api" })),
    }),
    defineRoute({
      method: "GET",
      path: "/v1/subscriptions",
      auth: { kind: "api", anyOfScopes: READ },
      summary: "Get subscriptions",
      docs: eligibilityDocs,
      handler: async ({ principal, query }) =>
        reply.json(200, {
          subscriptionEligibilities: (await service.eligibility(principal.companyId, userFromQuery(query))).map(({ subscription, eligibility }) => ({
            subscription,
            eligibility: { isEligible: eligibility.isEligible },
          })),
        }),
    }),
    defineRoute({
      method: "POST",
      path: "/v1/subscriptions/unsubscribe",
      auth: { kind: "api", anyOfScopes: WRITE },
      body: jsonBodyCheckedBy(unsubscribeRequestSchema),
      rateLimit: "unsubscribe",
      summary: "Unsubscribe subscriptions",
      docs: unsubscribeDocs,
      handler: async ({ principal, body }) =>
        unsubscribeReply(await service.unsubscribe(principal.companyId, body as UnsubscribeRequest, { source: "api" })),
    }),
    defineRoute({
      method: "DELETE",
      path: "/v1/subscriptions",
      auth: { kind: "api", anyOfScopes: WRITE },
      rateLimit: "unsubscribe",
      summary: "Opt a phone or an email out of every subscription",
      docs: optOutDocs,
      handler: async ({ principal, query }) =>
        unsubscribeReply(await service.unsubscribe(principal.companyId, { user: userFromQuery(query) }, { source: "api" })),
    }),
    ...[INBOUND_PATH, `${INBOUND_PATH}/:token`].map((path) =>
      defineRoute({
        method: "POST",
        path,
        auth: { kind: "none" },
        body: inboundForm,
        summary: path === INBOUND_PATH ? "Receive an inbound text" : "Receive an inbound text at the secret path",
        docs: path === INBOUND_PATH ? inboundSignedDocs : inboundSecretPathDocs,
        async handler({ body, params, headers, path: requestPath }) {
          const from = body.From === undefined ? undefined : normalizeSenderNumber(body.From);
          const to = body.To === "" ? undefined : body.To;
          const problems = [
            ...(from === undefined ? [{ path: "From", message: "is required" }] : E164.test(from) ? [] : [{ path: "From", message: "must be a phone number" }]),
            ...(to === undefined ? [{ path: "To", message: "is required" }] : []),
          ];
          if (from === undefined || to === undefined || problems.length > 0) throw invalidFields(problems);
          const signed = sender?.verifyInbound?.({ url: context.publicUrl("api", requestPath), headers, params: body }) === true;
          const companyId = await service.senderNumbers.companyOf(normalizeSenderNumber(to));
          if (!signed && (companyId === undefined || params.token === undefined || !service.senderNumbers.verifyToken(companyId, params.token))) {
            if (sender?.verifyInbound) throw forbidden("the provider signature does not match this request");
            throw unauthorized("the webhook needs a valid provider signature or the company's secret path");
          }
          if (companyId === undefined) throw new HttpError(404, "not_found", "no company has this sender number");
          const result = await service.handleInbound({ from, to, body: body.Body ?? "", messageId: body.MessageSid ?? body.SmsSid });
          return reply.json(200, { received: true, keyword: result.keyword ?? null, changed: result.changed });
        },
      }),
    ),
  ];
}
