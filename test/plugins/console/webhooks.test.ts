import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Receiver } from "../webhooks/support.ts";
import { companyApi, signedInConsole, type SignedInConsole } from "./requests.ts";
import { pageText as text } from "./support.ts";

describe("console webhooks", () => {
  let c: SignedInConsole;
  let receiver: Receiver;
  let companyId: string;
  const api = (method: string, url: string, body?: unknown) => companyApi(c.t.kit, c.t.company.apiKey)(method, url, body);
  /** A profile change of Ada's: one custom_attribute.set delivery to each webhook, attempted. */
  const attributeSet = async (value: string) => {
    await api("POST", "/v1/attributes/custom", { properties: { tier: value }, user: { phone: c.f.world.phones[0] } });
    await c.t.scheduler.flush();
  };

  before(async () => {
    c = await signedInConsole();
    companyId = c.f.world.companyId;
    receiver = await Receiver.start();
  });
  after(async () => {
    await receiver.close();
    await c.t.stop();
  });

  it("lists the company's webhooks with their events, state and last delivery; a viewer reads them without forms", async () => {
    await c.f.webhook();
    const shown = text(await c.viewer.get("/console/webhooks"));
    // Nobody listens on port 9: the first attempt failed, the delivery waits for its retry.
    assert.match(shown, /URL Application Events State Last delivery http:\/\/127\.0\.0\.1:9\/hooks\/\d+ Default application custom_attribute\.set enabled failing since 2026-03-01 17:00 UTC pending custom_attribute\.set 2026-03-01 17:00 UTC /);
    assert.match(shown, /Signing keys .* Key id Made State .* signs /);
    for (const form of ["Create the webhook", "New signing key"]) assert.ok(!shown.includes(form), `a viewer has no ${form}`);
    const owners = text(await c.owner.get("/console/webhooks"));
    assert.ok(owners.includes("Create the webhook") && owners.includes("New signing key"));
  });

  it("shows a webhook's delivery log 50 a page, newest first, filtered by status", async () => {
    receiver.answer = () => ({ status: 200, body: '{"status":"success"}' });
    const { id } = await api("POST", "/v1/webhooks", { url: receiver.url, events: ["custom_attribute.set"] });
    for (let n = 0; n < 52; n++) await attributeSet(`level-${n}`);
    const log = await c.t.kit.plugin("webhooks").deliveries.log(id, { limit: 100 });
    assert.equal(log.length, 52);
    const first = await c.viewer.get(`/console/webhooks/${id}`);
    assert.equal((first.body.match(/<code>msg_/g) ?? []).length, 50);
    assert.ok(first.body.indexOf(log[0]!.id) < first.body.indexOf(log[1]!.id), "newest first");
    assert.match(text(first), new RegExp(`${log[0]!.id} custom_attribute\\.set delivered 1 200 \\d+ ms 2026-03-01 17:00 UTC 2026-03-01 17:00 UTC \\{"status":"success"\\}`));
    const next = /href="([^"]+)" rel="next"/.exec(first.body)![1]!.replace(/&amp;/g, "&");
    const second = await c.viewer.get(next);
    assert.equal((second.body.match(/<code>msg_/g) ?? []).length, 2);
    assert.ok(second.body.includes(log[51]!.id) && !second.body.includes(log[0]!.id));
    assert.ok(!/rel="next"/.test(second.body), "the last page");
    assert.match(text(await c.viewer.get(`/console/webhooks/${id}?status=failed`)), /No deliveries match/);
    assert.equal((await c.viewer.get(`/console/webhooks/${id}?after=nonsense`)).status, 400);
    assert.ok(!first.body.includes("Send again"), "a viewer cannot send again");
    await api("DELETE", `/v1/webhooks/${id}`);
  });

  it("sends a delivery again for an owner, with its webhook-id, and logs the answer; a viewer, and a disabled webhook, are refused", async () => {
    let answers = [500, 200];
    receiver.answer = () => ({ status: answers.shift() ?? 200, body: "ok" });
    const { id } = await api("POST", "/v1/webhooks", { url: `${receiver.url}?redeliver`, events: ["custom_attribute.set"] });
    const before_ = receiver.requests.length;
    await attributeSet("platinum");
    const [delivery] = await c.t.kit.plugin("webhooks").deliveries.log(id);
    assert.deepEqual([delivery!.status, delivery!.attempts, delivery!.responseStatus], ["pending", 1, 500]);
    const url = `/console/webhooks/${id}/deliveries/${delivery!.id}/redeliver`;
    assert.equal((await c.viewer.act(url)).status, 403);
    assert.equal(receiver.requests.length, before_ + 1, "the viewer sent nothing");
    const sent = await c.owner.act(url, {}, `/console/webhooks/${id}`);
    assert.equal(sent.status, 303);
    assert.equal(sent.headers.location, `/console/webhooks/${id}?done=redelivered`);
    assert.equal(receiver.requests.length, before_ + 2);
    assert.equal(receiver.requests.at(-1)!.headers["webhook-id"], delivery!.id, "the same webhook-id");
    assert.match(text(await c.owner.get(sent.headers.location!)), new RegExp(`The delivery was sent again.*${delivery!.id} Send again custom_attribute\\.set delivered 2 200 `));
    await c.owner.act(`/console/webhooks/${id}/disable`);
    const refused = await c.owner.act(url);
    assert.equal(refused.status, 409);
    assert.match(text(refused), /the webhook is disabled: enable it first/);
    assert.equal(receiver.requests.length, before_ + 2);
    answers = [];
  });

  it("creates a webhook with the API's checks, each refusal naming its field; disables, enables and deletes it", async () => {
    const application = await c.f.application();
    const refusals = [
      [{ url: "ftp://shop.example/hooks", "event:sms.subscribed": "yes" }, "url"],
      [{ url: "https://shop.example/hooks" }, "events"],
    ] as const;
    for (const [fields, path] of refusals) {
      const refused = await c.owner.act("/console/webhooks", { applicationId: application, ...fields });
      assert.equal(refused.status, 400, path);
      assert.match(text(refused), new RegExp(`${path} : must`), path);
    }
    const withoutApplication = await c.owner.act("/console/webhooks", { url: "https://shop.example/hooks", "event:sms.subscribed": "yes" });
    assert.equal(withoutApplication.status, 400, "a form without its application");
    assert.match(text(withoutApplication), /applicationId : choose one of the company's applications/);
    const created = await c.owner.act("/console/webhooks", { applicationId: application, url: "https://shop.example/hooks/console", "event:sms.subscribed": "yes", "event:email.subscribed": "yes" });
    assert.equal(created.status, 303);
    const registry = c.t.kit.plugin("webhooks").registry;
    const webhook = (await registry.ofCompany(companyId)).find((one) => one.url === "https://shop.example/hooks/console")!;
    assert.deepEqual([webhook.applicationId, webhook.events], [application, ["sms.subscribed", "email.subscribed"]]);
    assert.equal(created.headers.location, `/console/webhooks/${webhook.id}?done=created`);
    assert.equal((await c.owner.act("/console/webhooks", { applicationId: application, url: "https://shop.example/hooks/console", "event:sms.subscribed": "yes" })).status, 409, "one webhook per URL, as the API");
    await c.owner.act(`/console/webhooks/${webhook.id}/disable`);
    assert.notEqual((await registry.get(webhook.id))?.disabledAt, undefined);
    assert.match(text(await c.owner.get(`/console/webhooks/${webhook.id}`)), /State disabled since 2026-03-01 17:00 UTC: disabled through the API .*Enable the webhook/);
    await c.owner.act(`/console/webhooks/${webhook.id}/enable`);
    assert.equal((await registry.get(webhook.id))?.disabledAt, undefined);
    const deleted = await c.owner.act(`/console/webhooks/${webhook.id}/delete`);
    assert.equal(deleted.headers.location, "/console/webhooks?done=deleted");
    assert.equal(await registry.get(webhook.id), undefined);
    assert.equal((await c.owner.get(`/console/webhooks/${webhook.id}`)).status, 404);
  });

  it("makes a new signing key of the company's own application, shown once, the old one signing for the overlap", async () => {
    const application = await c.f.application();
    const keys = c.t.kit.plugin("webhooks").signingKeys;
    const before_ = await keys.signingKeys(application);
    const rotate = `/console/webhooks/signing-keys/${application}/rotate`;
    const refused = await c.owner.act(rotate, { overlapHours: "721" });
    assert.equal(refused.status, 400);
    assert.match(text(refused), /overlapHours : must be a whole number of hours from 0 to 720/);
    const page = await c.owner.act(rotate, { overlapHours: "2" });
    assert.equal(page.status, 200);
    const shown = /<section class="secret"[\s\S]*?<code>([^<]+)<\/code>/.exec(page.body)![1];
    assert.deepEqual(await keys.signingKeys(application), [shown, ...before_]);
    assert.match(text(page), /It is shown once: store it now\. The previous key signs beside it for 2 hours\./);
    assert.ok(!(await c.owner.get("/console/webhooks")).body.includes(shown!), "shown once");
    await c.t.scheduler.advance(2 * 3_600_000 + 1);
    assert.deepEqual(await keys.signingKeys(application), [shown]);
    assert.equal((await c.owner.act("/console/webhooks/signing-keys/nope/rotate")).status, 404);
  });
});
