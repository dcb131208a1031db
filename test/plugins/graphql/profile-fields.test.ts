import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { graphqlPlugin } from "../../../plugins/graphql/index.ts";
import { profilesPlugin } from "../../../plugins/profiles/index.ts";
import { defaultPlugins, startTestKit, type Json, type TestKit } from "../../support/test-kit.ts";

const PHONE = "+19148440001";
const EMAIL = "ada@example.com";

function graphql(t: TestKit, user: string, fields: string, variables: Json = {}) {
  const declarations = fields.includes("$") ? "($after: String, $first: Int)" : "";
  const query = `query${declarations} { viewer { installedApplication { installerCompany { person: user(${user}) { ${fields} } } } } }`;
  return t.request({ method: "POST", url: "/v1/graphql", body: { query, variables } });
}

const person = (body: Json) => {
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  return body.data.viewer.installedApplication.installerCompany.person;
};

const PROFILE = `externalIdentifiers { clientUserId shopifyId klaviyoId customIdentifiers { name value } } attributes { name value }`;
const EVENTS = `events(first: $first, after: $after) { edges { cursor node { kind type occurredAt properties orderId salesChannel triggered items { productId price { value currency } } } }
  pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }`;

describe("GraphQL user: externalIdentifiers, attributes and events", () => {
  let t: TestKit;
  before(async () => {
    t = await startTestKit({ plugins: [...defaultPlugins(), graphqlPlugin(), profilesPlugin()], config: { rateLimits: { default: Infinity } } });
    const profiles = t.kit.plugin("profiles");
    const companyId = t.company.companyId;
    await profiles.identify(companyId, { phone: PHONE, email: EMAIL, clientUserId: "c-1", klaviyoId: "k-1", customIdentifiers: { loyaltyId: "L-9" } });
    await profiles.setAttributes(companyId, { properties: { tier: "gold", visits: 3, vip: true }, user: { phone: PHONE } });
    const at = (hoursAgo: number) => new Date(t.clock.now() - hoursAgo * 3_600_000).toISOString();
    await profiles.recordCustomEvent(companyId, { type: "Signed up", properties: { via: "popup" }, occurredAt: at(13), user: { email: EMAIL } });
    await profiles.recordEcommerceEvent(companyId, "product_view", { items: [{ productId: "p-1", productVariantId: "v-1", price: [{ value: 12.5 }] }], occurredAt: at(2), user: { phone: PHONE } });
    await profiles.recordEcommerceEvent(companyId, "purchase", { items: [{ productId: "p-1", productVariantId: "v-1", price: [{ value: 25, currency: "eur" }] }], orderId: "A-1001", salesChannel: { channelType: "WEB" }, occurredAt: at(1), user: { phone: PHONE } });
  });
  after(() => t.stop());

  it("answers the person's external identifiers and attributes, by phone or by email", async () => {
    for (const user of [`phone: "${PHONE}"`, `email: "ADA@example.com"`]) {
      const found = person(t.json(await graphql(t, user, PROFILE)));
      assert.deepEqual(found, {
        externalIdentifiers: { clientUserId: "c-1", shopifyId: null, klaviyoId: "k-1", customIdentifiers: [{ name: "loyaltyId", value: "L-9" }] },
        attributes: [
          { name: "tier", value: "gold" },
          { name: "vip", value: true },
          { name: "visits", value: 3 },
        ],
      });
    }
  });

  it("pages the events newest first as a Relay connection, endCursor to after, until hasNextPage is false", async () => {
    const first = person(t.json(await graphql(t, `phone: "${PHONE}"`, EVENTS, { first: 2 }))).events;
    assert.deepEqual(
      first.edges.map((edge: Json) => edge.node),
      [
        { kind: "PURCHASE", type: null, occurredAt: "2026-03-01T11:00:00.000Z", properties: null, orderId: "A-1001", salesChannel: "WEB", triggered: true, items: [{ productId: "p-1", price: [{ value: 25, currency: "EUR" }] }] },
        { kind: "PRODUCT_VIEW", type: null, occurredAt: "2026-03-01T10:00:00.000Z", properties: null, orderId: null, salesChannel: null, triggered: true, items: [{ productId: "p-1", price: [{ value: 12.5, currency: "USD" }] }] },
      ],
    );
    assert.deepEqual(first.pageInfo, { hasNextPage: true, hasPreviousPage: false, startCursor: first.edges[0].cursor, endCursor: first.edges[1].cursor });
    const rest = person(t.json(await graphql(t, `phone: "${PHONE}"`, EVENTS, { first: 2, after: first.pageInfo.endCursor }))).events;
    assert.deepEqual(
      rest.edges.map((edge: Json) => edge.node),
      [{ kind: "CUSTOM", type: "Signed up", occurredAt: "2026-02-28T23:00:00.000Z", properties: { via: "popup" }, orderId: null, salesChannel: null, triggered: false, items: null }],
    );
    assert.equal(rest.pageInfo.hasNextPage, false);
    assert.equal(rest.pageInfo.hasPreviousPage, true);
    // From the middle: after the first edge comes the second.
    const middle = person(t.json(await graphql(t, `phone: "${PHONE}"`, EVENTS, { first: 1, after: first.edges[0].cursor }))).events;
    assert.equal(middle.edges[0].node.kind, "PRODUCT_VIEW");
    const defaults = person(t.json(await graphql(t, `phone: "${PHONE}"`, `events { edges { node { kind } } }`))).events;
    assert.equal(defaults.edges.length, 3, "20 by default");
  });

  it("answers an unknown person with no identifiers, no attributes and an empty connection", async () => {
    const found = person(t.json(await graphql(t, `phone: "+19148440009"`, `${PROFILE} ${EVENTS}`, { first: 5 })));
    assert.deepEqual(found, {
      externalIdentifiers: { clientUserId: null, shopifyId: null, klaviyoId: null, customIdentifiers: [] },
      attributes: [],
      events: { edges: [], pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null } },
    });
  });

  it("refuses first beyond 100 or below 0, and a cursor it did not make, as BAD_USER_INPUT", async () => {
    for (const variables of [{ first: 101 }, { first: -1 }, { first: 5, after: "bm90IGEgY3Vyc29y" }, { first: 5, after: "!!" }]) {
      const body = t.json(await graphql(t, `phone: "${PHONE}"`, EVENTS, variables));
      assert.equal(body.errors?.[0]?.extensions?.code, "BAD_USER_INPUT", JSON.stringify(variables));
    }
  });

  it("answers the profile fields as for an unknown person in a kit without the profiles plugin", async () => {
    const bare = await startTestKit({ plugins: [...defaultPlugins(), graphqlPlugin()] });
    const found = person(bare.json(await graphql(bare, `phone: "${PHONE}"`, `${PROFILE} events(first: 1) { edges { cursor } }`)));
    assert.deepEqual(found, { externalIdentifiers: { clientUserId: null, shopifyId: null, klaviyoId: null, customIdentifiers: [] }, attributes: [], events: { edges: [] } });
    await bare.stop();
  });
});
