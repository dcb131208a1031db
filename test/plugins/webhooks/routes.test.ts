import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { KNOWN_EVENTS, webhooksPlugin } from "../../../plugins/webhooks/index.ts";
import { accountsPlugin } from "../../../plugins/accounts/index.ts";
import { startTestKit, type Json, type TestKit } from "../../support/test-kit.ts";
import { startWebhookKit, type WebhookKit } from "./support.ts";

const URL_A = "https://hooks.example/a";

describe("webhook routes", () => {
  let t: WebhookKit;
  before(async () => {
    t = await startWebhookKit({ webhooks: { allowPrivateTargets: false, maxWebhooksPerApplication: 3 } });
  });
  after(() => t.stop());

  const send = (method: string, url: string, body?: unknown, token?: string) => t.request({ method, url, body, ...(token ? { token } : {}) });

  it("creates (201), lists, updates (200) and deletes (204, no body) a webhook in the reference's shapes", async () => {
    const created = await send("POST", "/v1/webhooks", { url: URL_A, events: ["sms.subscribed", "sms.subscribed", "email.unsubscribed"] });
    assert.equal(created.status, 201, created.body);
    const webhook = t.json(created);
    assert.deepEqual({ ...webhook, id: "<id>" }, { id: "<id>", url: URL_A, events: ["sms.subscribed", "email.unsubscribed"], type: "CREATOR", disabledAt: null });
    const listed = await send("GET", "/v1/webhooks");
    assert.equal(listed.status, 200);
    assert.deepEqual(t.json(listed), {
      webhooks: [{ id: webhook.id, url: URL_A, type: "SUBSCRIPTION", events: ["sms.subscribed", "email.unsubscribed"], companyId: t.company.companyId, disabledAt: null }],
    });
    const disabled = await send("PUT", `/v1/webhooks/${webhook.id}`, { disabled: true, events: ["sms.sent"] });
    assert.equal(disabled.status, 200);
    assert.match(t.json(disabled).disabledAt, /^2026-03-01 12:00:00$/);
    assert.deepEqual(t.json(disabled).events, ["sms.sent"]);
    const enabled = await send("PUT", `/v1/webhooks/${webhook.id}`, { disabled: false });
    assert.equal(t.json(enabled).disabledAt, null);
    const deleted = await send("DELETE", `/v1/webhooks/${webhook.id}`);
    assert.equal(deleted.status, 204);
    assert.equal(deleted.body, "");
    assert.equal(deleted.headers["content-type"], undefined);
    assert.deepEqual(t.json(await send("GET", "/v1/webhooks")), { webhooks: [] });
    assert.equal((await send("DELETE", `/v1/webhooks/${webhook.id}`)).status, 404);
    assert.equal((await send("PUT", `/v1/webhooks/${webhook.id}`, { disabled: false })).status, 404);
  });

  it("answers 400 listing the known events for an unknown name, and names each bad field", async () => {
    const unknown = await send("POST", "/v1/webhooks", { url: URL_A, events: ["sms.subscribed", "SMS.SENT"] });
    assert.equal(unknown.status, 400);
    const [detail] = t.json(unknown).error.details;
    assert.equal(detail.path, "events.1");
    assert.match(detail.message, /unknown event "SMS.SENT"; known events: sms\.subscribed, /);
    for (const name of KNOWN_EVENTS) assert.ok(detail.message.includes(name), name);
    const cases: Array<[unknown, string]> = [
      [{ events: ["sms.sent"] }, "url"],
      [{ url: URL_A }, "events"],
      [{ url: URL_A, events: [] }, "events"],
      [{ url: URL_A, events: "sms.sent" }, "events"],
      [{ url: "ftp://hooks.example/x", events: ["sms.sent"] }, "url"],
      [{ url: "https://user:pw@hooks.example/x", events: ["sms.sent"] }, "url"],
      [{ url: "hooks.example/x", events: ["sms.sent"] }, "url"],
      [{ url: `https://hooks.example/${"x".repeat(2048)}`, events: ["sms.sent"] }, "url"],
      [{ url: URL_A, events: Array.from({ length: 101 }, () => "sms.sent") }, "events"],
      [[], "body"],
    ];
    for (const [body, path] of cases) {
      const answer = await send("POST", "/v1/webhooks", body);
      assert.equal(answer.status, 400, JSON.stringify(body).slice(0, 80));
      assert.ok(t.json(answer).error.details.some((d: Json) => d.path === path), `${JSON.stringify(body).slice(0, 80)}: ${answer.body.slice(0, 300)}`);
    }
    const badPut = await send("PUT", "/v1/webhooks/anything", { disabled: "no" });
    assert.equal(badPut.status, 400);
    assert.equal(t.json(badPut).error.details[0].path, "disabled");
  });

  it("by default refuses loopback, private, link-local and metadata addresses at create", async () => {
    for (const url of ["http://127.0.0.1:8080/x", "http://localhost/x", "http://10.0.0.7/x", "http://169.254.169.254/latest", "http://[::1]/x", "http://[fd00:ec2::254]/", "http://[::ffff:127.0.0.1]/x"]) {
      const answer = await send("POST", "/v1/webhooks", { url, events: ["sms.sent"] });
      assert.equal(answer.status, 400, url);
      assert.equal(t.json(answer).error.details[0].path, "url");
    }
  });

  it("refuses a second webhook of the application for the same URL (409), and more than the limit per application", async () => {
    const first = t.json(await send("POST", "/v1/webhooks", { url: "https://hooks.example/one", events: ["sms.sent"] }));
    const again = await send("POST", "/v1/webhooks", { url: "https://hooks.example/one", events: ["email.sent"] });
    assert.equal(again.status, 409);
    assert.match(t.json(again).error.message, new RegExp(first.id));
    await send("POST", "/v1/webhooks", { url: "https://hooks.example/two", events: ["sms.sent"] });
    await send("POST", "/v1/webhooks", { url: "https://hooks.example/three", events: ["sms.sent"] });
    const fourth = await send("POST", "/v1/webhooks", { url: "https://hooks.example/four", events: ["sms.sent"] });
    assert.equal(fourth.status, 409);
    assert.equal(t.json(fourth).error.code, "too_many_webhooks");
    const moved = await send("PUT", `/v1/webhooks/${first.id}`, { url: "https://hooks.example/two" });
    assert.equal(moved.status, 409);
    for (const webhook of t.json(await send("GET", "/v1/webhooks")).webhooks) await send("DELETE", `/v1/webhooks/${webhook.id}`);
  });

  it("keeps each application's webhooks apart at a company: another application of the company neither sees nor changes them", async () => {
    const accounts = t.kit.plugin("accounts");
    const other = await accounts.createApplication({ companyId: t.company.companyId, name: "Other", scopes: ["webhooks:write"] });
    const otherKey = (await accounts.issueCredential({ companyId: t.company.companyId, kind: "api_key", applicationId: other.id })).token;
    const mine = t.json(await send("POST", "/v1/webhooks", { url: URL_A, events: ["sms.sent"] }));
    assert.deepEqual(t.json(await send("GET", "/v1/webhooks", undefined, otherKey)), { webhooks: [] });
    assert.equal((await send("PUT", `/v1/webhooks/${mine.id}`, { disabled: true }, otherKey)).status, 404);
    assert.equal((await send("DELETE", `/v1/webhooks/${mine.id}`, undefined, otherKey)).status, 404);
    // The same URL is the other application's to use.
    assert.equal((await send("POST", "/v1/webhooks", { url: URL_A, events: ["sms.sent"] }, otherKey)).status, 201);
    await send("DELETE", `/v1/webhooks/${mine.id}`);
  });
});

describe("webhooks of an OAuth application installed by two companies", () => {
  let t: TestKit;
  before(async () => {
    t = await startTestKit({ plugins: [accountsPlugin(), webhooksPlugin()] });
  });
  after(() => t.stop());

  it("are separate per company, typed INSTALLED, and each company lists only its own", async () => {
    const accounts = t.kit.plugin("accounts");
    const developer = await accounts.createCompany({ name: "Appmaker" });
    const app = await accounts.createApplication({ companyId: developer.id, name: "Shop Sync", scopes: ["webhooks:write"], kind: "public" });
    const tokens: string[] = [];
    const companies = [t.company.companyId, (await accounts.createCompany({ name: "Globex" })).id];
    for (const companyId of companies) tokens.push((await accounts.issueCredential({ companyId, kind: "oauth", applicationId: app.id, scopes: ["webhooks:write"] })).token);
    const created = [];
    for (const token of tokens) {
      const answer = await t.request({ method: "POST", url: "/v1/webhooks", body: { url: URL_A, events: ["sms.subscribed"] }, token });
      assert.equal(answer.status, 201, answer.body);
      assert.equal(t.json(answer).type, "INSTALLED");
      created.push(t.json(answer).id);
    }
    for (const [index, token] of tokens.entries()) {
      const listed = t.json(await t.request({ url: "/v1/webhooks", token })).webhooks;
      assert.deepEqual(listed.map((webhook: Json) => [webhook.id, webhook.companyId]), [[created[index], companies[index]]]);
    }
    assert.equal((await t.request({ method: "DELETE", url: `/v1/webhooks/${created[0]}`, token: tokens[1] })).status, 404);
  });
});
