import * as v from "valibot";
import { defineRoute, invalidFields, jsonBody, parseOrThrow, reply, singleQueryParam, type AnyRoute, type RawQuery } from "../../src/index.ts";
import type { EventTimeline } from "./event-timeline.ts";
import type { ProfileAttributes } from "./profile-attributes.ts";
import type { ProfilesService } from "./profiles-service.ts";
import type { Identifier } from "./records.ts";
import { emailSchema, phoneSchema, profileSchemas } from "./schemas.ts";
import type { ProfilesSettings } from "./tokens.ts";

const ECOMMERCE = [
  { path: "product-view", kind: "product_view", schema: profileSchemas.ecommerceEvent },
  { path: "add-to-cart", kind: "add_to_cart", schema: profileSchemas.ecommerceEvent },
  { path: "purchase", kind: "purchase", schema: profileSchemas.purchaseEvent },
] as const;

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

/** The v1 routes of events, attributes and identity, with the reference's statuses and empty bodies. */
export function profileRoutes(parts: { service: ProfilesService; timeline: EventTimeline; attributes: ProfileAttributes; settings: ProfilesSettings }): AnyRoute[] {
  const { service, timeline, attributes, settings } = parts;
  const bodyLimitBytes = settings.eventBodyLimitBytes;
  return [
    defineRoute({
      method: "POST",
      path: "/v1/events/custom",
      auth: { kind: "api", anyOfScopes: ["events:write"] },
      body: jsonBody(profileSchemas.customEvent),
      bodyLimitBytes,
      summary: "Record a custom event of a person (200, empty body)",
      async handler({ body, principal }) {
        await timeline.recordCustom(principal.companyId, body);
        return reply.empty(200);
      },
    }),
    ...ECOMMERCE.map(({ path, kind, schema }) =>
      defineRoute({
        method: "POST",
        path: `/v1/events/ecommerce/${path}`,
        auth: { kind: "api", anyOfScopes: ["ecommerce:write"] },
        body: jsonBody(schema),
        bodyLimitBytes,
        summary: `Record a ${path} ecommerce event of a person (200, empty body)`,
        async handler({ body, principal }) {
          await timeline.recordEcommerce(principal.companyId, kind, body);
          return reply.empty(200);
        },
      }),
    ),
    defineRoute({
      method: "POST",
      path: "/v1/attributes/custom",
      auth: { kind: "api", anyOfScopes: ["attributes:write"] },
      body: jsonBody(profileSchemas.attributes),
      bodyLimitBytes,
      summary: "Set custom attributes of a person (200, empty body)",
      async handler({ body, principal }) {
        await attributes.set(principal.companyId, body);
        return reply.empty(200);
      },
    }),
    defineRoute({
      method: "GET",
      path: "/v1/attributes/custom",
      auth: { kind: "api", anyOfScopes: ["attributes:write"] },
      summary: "The custom attributes of the person a phone or an email names: [{name, value}]",
      async handler({ query, principal }) {
        return reply.json(200, await service.attributes(principal.companyId, identifierFromQuery(query)));
      },
    }),
    defineRoute({
      method: "POST",
      path: "/v1/identity-resolution/user-identifiers",
      auth: { kind: "api", anyOfScopes: ["identity:write"] },
      body: jsonBody(profileSchemas.identify),
      bodyLimitBytes,
      rateLimit: "identity",
      summary: "Link a person's identifiers to one profile (202, empty body)",
      async handler({ body, principal }) {
        await service.link(principal.companyId, body);
        return reply.empty(202);
      },
    }),
  ];
}
