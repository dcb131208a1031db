import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { accountsPlugin } from "../../plugins/accounts/index.ts";
import { graphqlPlugin } from "../../plugins/graphql/index.ts";
import { subscriptionsPlugin } from "../../plugins/subscriptions/index.ts";
import { startTestKit } from "../support/test-kit.ts";

const PHONE = "+19148440001";

describe("services are resolved when the kit is built", () => {
  it("serves GET /v1/me, GET /v1/subscriptions, POST /v1/graphql and POST /sms/inbound without resolving anything from the container", async () => {
    const t = await startTestKit({ plugins: [accountsPlugin(), subscriptionsPlugin(), graphqlPlugin()] });
    const senders = t.kit.plugin("subscriptions").senderNumbers;
    const sender = (await t.kit.plugin("accounts").getCompany(t.company.companyId))!.senderNumber!;
    const requests = [
      { url: "/v1/me" },
      { url: `/v1/subscriptions?phone=${encodeURIComponent(PHONE)}` },
      { method: "POST", url: "/v1/graphql", body: { query: `{ viewer { installedApplication { installerCompany { user(phone: "${PHONE}") { subscriptions { subscriptionEligibilities { eligibility { isEligible } } } } } } } }` } },
      {
        method: "POST",
        url: senders.webhookPath(t.company.companyId),
        token: null,
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ From: PHONE, To: sender, Body: "HELP" }).toString(),
      },
    ] as const;
    const send = async () => {
      for (const request of requests) {
        const response = await t.request(request);
        assert.equal(response.status, 200, request.url);
        assert.equal(t.json(response).errors, undefined, response.body);
      }
    };
    // The first requests find the accounts service for the HTTP core and the outbox, once.
    await send();
    const resolved: string[] = [];
    const resolve = t.kit.container.resolve.bind(t.kit.container);
    t.kit.container.resolve = (token) => {
      resolved.push(token.description ?? "");
      return resolve(token);
    };
    await send();
    assert.deepEqual(resolved, []);
    await t.stop();
  });
});
