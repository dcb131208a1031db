import * as v from "valibot";
import { defineRoute, invalidFields, jsonBodyCheckedBy, parseOrThrow, reply, singleQueryParam, type AnyRoute, type RawQuery } from "../../src/index.ts";
import * as docs from "./openapi.ts";
import type { AttributesRequest, CustomEventRequest, EcommerceEventRequest, IdentifyRequest, ProfilesService, PurchaseEventRequest } from "./profiles-service.ts";
import type { Identifier } from "./records.ts";
import { emailSchema, phoneSchema, profileSchemas } from "./schemas.ts";
import type { ProfilesSettings } from "./tokens.ts";

const ECOMMERCE = [
  { path: "product-view", kind: "product_view", schema: profileSchemas.ecommerceEvent, docs: docs.productViewDocs },
  { path: "add-to-cart", kind: "add_to_cart", schema: profileSchemas.ecommerceEvent, docs: docs.addToCartDocs },
  { path: "purchase", kind: "purchase", schema: profileSchemas.purchaseEvent, docs: docs.purchaseDocs },
] as const;

// A route handler runs outside any transaction: its event may share the turn's commit.
const GROUP_COMMIT = { groupCommit: true } as const;

const attributesQuery = v.object({ phone: singleQueryParam(), email: singleQueryParam() });

/**
 * `?phone=` or `?email=`, exactly one, read as careless clients send them (a
 * `+` decoded to a space is a `+`; `email=undefined` is no email).
 */
function identifierFromQuery(raw: RawQuery): Identifier {
  const query = parseOrThrow(attributesQuery, raw, "query");
  const phone = query.phone === undefined ? undefined : /^ \d/.test(query.phone) ? `+${query.phone.slice(1)}` : query.phone;
  const email = query.email === "undefined" ? undefined : query.email;
  if ((phone === undefined) === (email === undefined)) {
    const message = "give exactly one of phone and email";
    throw invalidFields([
      { path: "phone", message },
      { path: "email", message },
    ]);
  }
  const [field, schema, value] = phone !== undefined ? (["phone", phoneSchema, phone] as const) : (["email", emailSchema, email!] as const);
  const parsed = v.safeParse(schema, value);
  if (!parsed.success) throw invalidFields([{ path: field, message: parsed.issues[0].message }]);
  return { kind: field, value: parsed.output };
}

/**
 * The v1 routes of events, attributes and identity, with the reference's
 * statuses and empty bodies. Bodies are validated by the service
 * (jsonBodyCheckedBy), so HTTP and in-process callers share one code path.
 */
export function profileRoutes(service: ProfilesService, settings: ProfilesSettings): AnyRoute[] {
  const bodyLimitBytes = settings.eventBodyLimitBytes;
  return [
    defineRoute({
      method: "POST",
      path: "/v1/events/custom",
      auth: { kind: "api", anyOfScopes: ["events:write"] },
      body: jsonBodyCheckedBy(profileSchemas.customEvent),
      bodyLimitBytes,
      summary: "Record a custom event",
      docs: docs.customEventDocs,
      async handler({ body, principal }) {
        await service.recordCustomEvent(principal.companyId, body as CustomEventRequest, GROUP_COMMIT);
        return reply.empty(200);
      },
    }),
    ...ECOMMERCE.map(({ path, kind, schema, docs: routeDocs }) =>
      defineRoute({
        method: "POST",
        path: `/v1/events/ecommerce/${path}`,
        auth: { kind: "api", anyOfScopes: ["ecommerce:write"] },
        body: jsonBodyCheckedBy(schema),
        bodyLimitBytes,
        summary: `Record a ${path} event`,
        docs: routeDocs,
        async handler({ body, principal }) {
          // The purchase schema is a superset of the others: one signature takes all three.
          await service.recordEcommerceEvent(principal.companyId, kind as "purchase", body as EcommerceEventRequest & PurchaseEventRequest, GROUP_COMMIT);
          return reply.empty(200);
        },
      }),
    ),
    defineRoute({
      method: "POST",
      path: "/v1/attributes/custom",
      auth: { kind: "api", anyOfScopes: ["attributes:write"] },
      body: jsonBodyCheckedBy(profileSchemas.attributes),
      bodyLimitBytes,
      summary: "Set custom attributes",
      docs: docs.setAttributesDocs,
      async handler({ body, principal }) {
        await service.setAttributes(principal.companyId, body as AttributesRequest);
        return reply.empty(200);
      },
    }),
    defineRoute({
      method: "GET",
      path: "/v1/attributes/custom",
      auth: { kind: "api", anyOfScopes: ["attributes:write"] },
      summary: "Get the custom attributes of a person",
      docs: docs.getAttributesDocs,
      async handler({ query, principal }) {
        return reply.json(200, await service.attributes(principal.companyId, identifierFromQuery(query)));
      },
    }),
    defineRoute({
      method: "POST",
      path: "/v1/identity-resolution/user-identifiers",
      auth: { kind: "api", anyOfScopes: ["identity:write"] },
      body: jsonBodyCheckedBy(profileSchemas.identify),
      bodyLimitBytes,
      rateLimit: "identity",
      summary: "Link a person's identifiers",
      docs: docs.identifyDocs,
      async handler({ body, principal }) {
        await service.identify(principal.companyId, body as IdentifyRequest);
        return reply.empty(202);
      },
    }),
  ];
}
