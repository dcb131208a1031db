import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { getIntrospectionQuery } from "graphql";
import { accountsPlugin } from "../../../plugins/accounts/index.ts";
import { graphqlPlugin } from "../../../plugins/graphql/index.ts";
import { SUBSCRIPTIONS_SERVICE, type SubscriptionsService } from "../../../plugins/subscriptions/index.ts";
import { definePlugin } from "../../../src/index.ts";
import { defaultPlugins, startTestKit, type Json, type TestKit } from "../../support/test-kit.ts";
import { optIn } from "../subscriptions/support.ts";

const ACTIVE = "+19148440001";
const PENDING = "+19148440002";
const OPTED_OUT = "+19148440003";
const EMAIL = "ada@example.com";

const ELIGIBILITIES = `subscriptions { subscriptionEligibilities { subscription { channel type } eligibility { isEligible ineligibilityReason } } }`;

function graphql(t: TestKit, query: string, options: { variables?: Json; token?: string | null } = {}) {
  return t.request({ method: "POST", url: "/v1/graphql", body: { query, variables: options.variables ?? {} }, token: options.token });
}

describe("POST /v1/graphql", () => {
  let t: TestKit;
  before(async () => {
    t = await startTestKit({ plugins: [...defaultPlugins(), graphqlPlugin()], config: { rateLimits: { "opt-in": 100, default: 1000 } } });
    await optIn(t, { user: { phone: ACTIVE, email: EMAIL }, singleOptIn: true });
    await optIn(t, { user: { phone: PENDING } });
    await optIn(t, { user: { phone: OPTED_OUT }, singleOptIn: true });
    await t.scheduler.flush();
    await t.kit.plugin("subscriptions").unsubscribe(t.company.companyId, { user: { phone: OPTED_OUT } });
    await t.scheduler.flush();
  });
  after(() => t.stop());

  it("answers three aliased users with each one's eligibilities, in the prefixed enums, and the trace id", async () => {
    const query = `{ viewer { installedApplication { installerCompany { id name
      active: user(phone: "${ACTIVE}") { ${ELIGIBILITIES} }
      pending: user(phone: "${PENDING}") { ${ELIGIBILITIES} }
      out: user(phone: "${OPTED_OUT}") { ${ELIGIBILITIES} }
    } } } }`;
    const response = await graphql(t, query);
    assert.equal(response.status, 200);
    const body = t.json(response);
    assert.equal(body.errors, undefined);
    assert.equal(body.extensions.traceId, response.headers["x-trace-id"]);
    const company = body.data.viewer.installedApplication.installerCompany;
    assert.deepEqual([company.id, company.name], [t.company.companyId, "Acme"]);
    const rows = (alias: string) => company[alias].subscriptions.subscriptionEligibilities;
    assert.deepEqual(rows("active"), [
      { subscription: { channel: "CHANNEL_TEXT", type: "TYPE_MARKETING" }, eligibility: { isEligible: true, ineligibilityReason: null } },
    ]);
    assert.deepEqual(rows("pending"), [
      {
        subscription: { channel: "CHANNEL_TEXT", type: "TYPE_MARKETING" },
        eligibility: { isEligible: false, ineligibilityReason: "INELIGIBILITY_REASON_NOT_FULLY_OPTED_IN" },
      },
    ]);
    assert.deepEqual(rows("out"), [
      {
        subscription: { channel: "CHANNEL_TEXT", type: "TYPE_MARKETING" },
        eligibility: { isEligible: false, ineligibilityReason: "INELIGIBILITY_REASON_OPTED_OUT" },
      },
    ]);
  });

  it("takes variables and looks users up by email", async () => {
    const query = `query Q($email: String) { viewer { installedApplication { installerCompany { user(email: $email) { email ${ELIGIBILITIES} } } } } }`;
    const body = t.json(await graphql(t, query, { variables: { email: "ADA@example.com" } }));
    const user = body.data.viewer.installedApplication.installerCompany.user;
    assert.equal(user.email, EMAIL);
    assert.deepEqual(user.subscriptions.subscriptionEligibilities.map((e: Json) => e.subscription.channel), ["CHANNEL_EMAIL"]);
  });

  it("answers a user without phone or email with a GraphQL error, and still answers the other aliases", async () => {
    const query = `{ viewer { installedApplication { installerCompany {
      nobody: user { ${ELIGIBILITIES} }
      bad: user(phone: "914-844-0001") { ${ELIGIBILITIES} }
      active: user(phone: "${ACTIVE}") { ${ELIGIBILITIES} }
    } } } }`;
    const response = await graphql(t, query);
    assert.equal(response.status, 200);
    const body = t.json(response);
    assert.deepEqual(
      body.errors.map((e: Json) => [e.path.join("."), e.extensions.code, e.message]),
      [
        ["viewer.installedApplication.installerCompany.nobody", "BAD_USER_INPUT", "user needs a phone or an email argument"],
        ["viewer.installedApplication.installerCompany.bad", "BAD_USER_INPUT", "phone must be E.164: + and the country code, then digits only (e.g. +19148440001)"],
      ],
    );
    const company = body.data.viewer.installedApplication.installerCompany;
    assert.equal(company.nobody, null);
    assert.equal(company.active.subscriptions.subscriptionEligibilities[0].eligibility.isEligible, true);
    assert.ok(body.extensions.traceId);
  });

  it("never shows another company's users", async () => {
    const other = await t.kit.provisionCompany({ name: "Other" });
    const query = `{ viewer { installedApplication { installerCompany { name user(phone: "${ACTIVE}") { ${ELIGIBILITIES} } } } } }`;
    const company = t.json(await graphql(t, query, { token: other.output.apiKey as string })).data.viewer.installedApplication.installerCompany;
    assert.equal(company.name, "Other");
    assert.deepEqual(company.user.subscriptions.subscriptionEligibilities, []);
  });

  it("refuses users to a token without a subscriptions scope, and a legacy or missing token with 401", async () => {
    const accounts = t.kit.plugin("accounts");
    const app = await accounts.createApplication({ companyId: t.company.companyId, name: "catalog only", scopes: ["product_catalogs:read"] });
    const token = (await accounts.issueCredential({ companyId: t.company.companyId, kind: "api_key", applicationId: app.id })).token;
    const body = t.json(await graphql(t, `{ viewer { installedApplication { installerCompany { name user(phone: "${ACTIVE}") { phone } } } } }`, { token }));
    assert.equal(body.data.viewer.installedApplication.installerCompany.name, "Acme");
    assert.equal(body.errors[0].extensions.code, "FORBIDDEN");
    assert.equal((await graphql(t, "{ viewer { __typename } }", { token: t.company.legacyToken })).status, 401);
    assert.equal((await graphql(t, "{ viewer { __typename } }", { token: null })).status, 401);
  });

  it("allows introspection to an authenticated caller only", async () => {
    const introspection = getIntrospectionQuery();
    const body = t.json(await graphql(t, introspection));
    assert.equal(body.errors, undefined);
    const enums = body.data.__schema.types.filter((type: Json) => type.kind === "ENUM" && !type.name.startsWith("__"));
    assert.deepEqual(
      Object.fromEntries(enums.map((type: Json) => [type.name, type.enumValues.map((value: Json) => value.name)])),
      {
        SubscriptionChannel: ["CHANNEL_TEXT", "CHANNEL_EMAIL"],
        SubscriptionType: ["TYPE_MARKETING", "TYPE_TRANSACTIONAL", "TYPE_CHECKOUT_ABANDONED"],
        IneligibilityReason: ["INELIGIBILITY_REASON_OPTED_OUT", "INELIGIBILITY_REASON_NOT_FULLY_OPTED_IN"],
        EventKind: ["CUSTOM", "PRODUCT_VIEW", "ADD_TO_CART", "PURCHASE"],
      },
    );
    assert.equal((await graphql(t, introspection, { token: null })).status, 401);
  });

  it("limits depth, fields, users and tokens, answering GraphQL errors without data", async () => {
    const deep = `{ __type(name: "User") { ${"ofType { ".repeat(20)}name${" }".repeat(20)} } }`;
    const users = `{ viewer { installedApplication { installerCompany { ${Array.from({ length: 101 }, (_, i) => `u${i}: user(phone: "${ACTIVE}") { phone }`).join(" ")} } } } }`;
    const fields = `{ ${Array.from({ length: 2001 }, (_, i) => `f${i}: __typename`).join(" ")} }`;
    const fragments = `fragment E on SubscriptionEligibility { subscription { channel type } }
      { viewer { installedApplication { installerCompany { ${Array.from({ length: 90 }, (_, i) => `u${i}: user(phone: "${ACTIVE}") { subscriptions { subscriptionEligibilities { ...E ...E ...E ...E ...E ...E ...E } } }`).join(" ")} } } } }`;
    const tokens = `{ ${"viewer { __typename } ".repeat(3000)} }`;
    for (const [query, pattern] of [
      [deep, /nested 22 levels deep; at most 15/],
      [users, /asks for 101 users; at most 100/],
      [fields, /selects 2001 fields; at most 2000/],
      [fragments, /selects \d+ fields; at most 2000/],
      [tokens, /contains more that 10000 tokens/],
    ] as const) {
      const response = await graphql(t, query);
      assert.equal(response.status, 200);
      const body = t.json(response);
      assert.equal(body.data, undefined);
      assert.match(body.errors[0].message, pattern);
      assert.ok(body.extensions.traceId);
    }
  });

  it("answers syntax and validation errors in a 200 body, and a body without a query with 400", async () => {
    const syntax = t.json(await graphql(t, "{ viewer { "));
    assert.match(syntax.errors[0].message, /Syntax Error/);
    const mutation = t.json(await graphql(t, "mutation { optIn }"));
    assert.match(mutation.errors[0].message, /not configured to execute mutation/);
    const unknown = t.json(await graphql(t, "{ viewer { nope } }"));
    assert.match(unknown.errors[0].message, /Cannot query field "nope"/);
    for (const [body, path] of [
      [{}, "query"],
      [{ query: 42 }, "query"],
      [{ query: "{ viewer { __typename } }", variables: [] }, "variables"],
    ] as const) {
      const response = await t.request({ method: "POST", url: "/v1/graphql", body });
      assert.equal(response.status, 400);
      assert.equal(t.json(response).error.details[0].path, path);
    }
  });
});

describe("POST /v1/graphql when a lookup fails", () => {
  it("answers a GraphQL error that quotes the trace id and hides the cause", async () => {
    const failing = definePlugin({
      name: "failing-subscriptions",
      register({ container }) {
        const service = { eligibilityOfMany: () => Promise.reject(new Error("disk on fire at /var/db")) } as unknown as SubscriptionsService;
        container.bind(SUBSCRIPTIONS_SERVICE, { useValue: service });
      },
    });
    const t = await startTestKit({ plugins: [accountsPlugin(), failing, graphqlPlugin()] });
    const response = await graphql(t, `{ viewer { installedApplication { installerCompany { user(phone: "${ACTIVE}") { ${ELIGIBILITIES} } } } } }`);
    assert.equal(response.status, 200);
    const body = t.json(response);
    assert.equal(body.errors[0].extensions.code, "INTERNAL_SERVER_ERROR");
    assert.equal(body.errors[0].message, `internal error; quote trace id ${body.extensions.traceId} when reporting it`);
    assert.doesNotMatch(response.body, /disk on fire/);
    await t.stop();
  });
});
