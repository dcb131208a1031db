import * as v from "valibot";
import { HttpError, invalidFields, unauthorized } from "../../src/http/errors.ts";
import { defineRoute, formBody, jsonBody, reply, type AnyRoute } from "../../src/http/route.ts";
import type { PluginContext } from "../../src/kernel/plugin.ts";
import { SMS_SENDER } from "../../src/ports/sms-sender.ts";
import type { OptInAccepted } from "./opt-ins.ts";
import { E164, userFromQuery, type OptInRequest, type UnsubscribeRequest } from "./schemas.ts";
import { INBOUND_PATH, normalizeSenderNumber } from "./sender-numbers.ts";
import type { SubscriptionsService } from "./subscriptions-service.ts";
import type { UnsubscribeAccepted } from "./unsubscribes.ts";

const WRITE = ["subscriptions:write"] as const;
// The reference's own specifications disagree on the scope of the read (wire-compat): either is accepted.
const READ = ["subscriptions:read", "subscriptions:write"] as const;

/** The body is validated by the service, so HTTP and in-process callers share one code path. */
const anyJson = jsonBody(v.unknown());
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
  return [
    defineRoute({
      method: "POST",
      path: "/v1/subscriptions",
      auth: { kind: "api", anyOfScopes: WRITE },
      body: anyJson,
      rateLimit: "opt-in",
      summary: "Opt a user in (interface 4.4); processed by a durable job",
      handler: async ({ principal, body }) => optInReply(await service.optIn(principal.companyId, body as OptInRequest, { source: "api" })),
    }),
    defineRoute({
      method: "GET",
      path: "/v1/subscriptions",
      auth: { kind: "api", anyOfScopes: READ },
      summary: "Eligibility of every subscription of a phone and/or email (interface 4.5)",
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
      body: anyJson,
      rateLimit: "unsubscribe",
      summary: "Unsubscribe a user (interface 4.6); processed by a durable job",
      handler: async ({ principal, body }) =>
        unsubscribeReply(await service.unsubscribe(principal.companyId, body as UnsubscribeRequest, { source: "api" })),
    }),
    defineRoute({
      method: "DELETE",
      path: "/v1/subscriptions",
      auth: { kind: "api", anyOfScopes: WRITE },
      rateLimit: "unsubscribe",
      summary: "Opt a phone out of every text subscription (wire-compat: one real client uses it)",
      handler: async ({ principal, query }) => {
        const { phone } = userFromQuery({ phone: query.phone });
        return unsubscribeReply(await service.unsubscribe(principal.companyId, { user: { phone } }, { source: "api" }));
      },
    }),
    ...[INBOUND_PATH, `${INBOUND_PATH}/:token`].map((path) =>
      defineRoute({
        method: "POST",
        path,
        auth: { kind: "none" },
        body: inboundForm,
        summary: "The SMS provider's inbound webhook (form fields From, To, Body)",
        async handler({ body, params, headers, path: requestPath }) {
          const from = body.From === undefined ? undefined : normalizeSenderNumber(body.From);
          const to = body.To === "" ? undefined : body.To;
          const problems = [
            ...(from === undefined ? [{ path: "From", message: "is required" }] : E164.test(from) ? [] : [{ path: "From", message: "must be a phone number" }]),
            ...(to === undefined ? [{ path: "To", message: "is required" }] : []),
          ];
          if (from === undefined || to === undefined || problems.length > 0) throw invalidFields(problems);
          const sender = context.container.has(SMS_SENDER) ? context.resolve(SMS_SENDER) : undefined;
          const signed = sender?.verifyInbound?.({ url: context.publicUrl("api", requestPath), headers, params: body }) === true;
          const companyId = await service.senderNumbers.companyOf(normalizeSenderNumber(to));
          if (!signed && (companyId === undefined || params.token === undefined || !service.senderNumbers.verifyToken(companyId, params.token))) {
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
