import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { Webhook } from "standardwebhooks";
import { fakeClock } from "../../../adapters/clock/index.ts";
import { memoryStorage } from "../../../adapters/storage/memory/index.ts";
import { campaignsPlugin } from "../../../plugins/campaigns/index.ts";
import { catalogPlugin } from "../../../plugins/catalog/index.ts";
import { profilesPlugin } from "../../../plugins/profiles/index.ts";
import { sendRulesPlugin } from "../../../plugins/send-rules/index.ts";
import { withCollectionMethod } from "../../support/storage-wrappers.ts";
import type { Json } from "../../support/test-kit.ts";
import { Receiver, singleOptIn, startWebhookKit, type WebhookKit } from "./support.ts";

const clickPlugins = () => [catalogPlugin(), profilesPlugin(), sendRulesPlugin(), campaignsPlugin()];

let t: WebhookKit | undefined;
let hooks: Receiver | undefined;
afterEach(async () => {
  await hooks?.close();
  await t?.stop();
  t = hooks = undefined;
});

describe("link clicks reach webhooks", () => {
  it("a click on an SMS's and an email's short link: sms.message_link_click and email.message_link_click, signed, with the subscriber and the link", async () => {
    // The standardwebhooks library checks webhook-timestamp against the real time.
    t = await startWebhookKit({ clock: fakeClock(Date.now()), plugins: clickPlugins() });
    hooks = await Receiver.start(t.signingKey);
    await t.createWebhook(hooks.url, ["sms.message_link_click", "email.message_link_click"]);
    await t.request({ method: "POST", url: "/v1/subscriptions", body: singleOptIn("+19148440001", { email: "ada@example.com" }) });
    await t.scheduler.flush();
    const links = t.kit.plugin("campaigns").links;
    const { companyId } = t.company;
    const smsLink = await links.shorten(companyId, "https://shop.example.com/sale", { source: "campaign", campaignId: "cmp-1", variant: "A", address: "+19148440001", channel: "sms" });
    const emailLink = await links.shorten(companyId, "https://shop.example.com/faq", { source: "message", address: "ada@example.com", channel: "email" });
    const followed = [await t.request({ url: new URL(smsLink).pathname, token: null }), await t.request({ url: new URL(emailLink).pathname, token: null })];
    assert.deepEqual(followed.map((answer) => answer.status), [302, 302]);
    await t.scheduler.flush();

    assert.equal(hooks.requests.length, 2);
    const [sms, email] = hooks.requests;
    for (const request of [sms!, email!]) {
      assert.ok(hooks.hmacMatches(request), "the hex HMAC the reference's demo app checks");
      new Webhook(t.signingKey).verify(request.body, request.headers as Record<string, string>);
    }
    const smsBody = sms!.json as Json;
    assert.equal(smsBody.type, "sms.message_link_click");
    assert.deepEqual(smsBody.company, { display_name: "Acme", company_id: companyId });
    assert.equal(smsBody.subscriber.phone, "+19148440001");
    assert.equal(typeof smsBody.subscriber.external_id, "number");
    assert.deepEqual(smsBody.link, { id: new URL(smsLink).pathname.slice(3), url: "https://shop.example.com/sale", source: "campaign", campaign_id: "cmp-1", variant: "A" });
    const emailBody = email!.json as Json;
    assert.equal(emailBody.type, "email.message_link_click");
    assert.equal(emailBody.subscriber.email, "ada@example.com");
    assert.equal(emailBody.subscriber.external_id, smsBody.subscriber.external_id, "the same subscriber");
    assert.deepEqual(emailBody.link, { id: new URL(emailLink).pathname.slice(3), url: "https://shop.example.com/faq", source: "message" });
    assert.deepEqual((await t.deliveries()).map((delivery) => [delivery.event, delivery.status]), [
      ["sms.message_link_click", "delivered"],
      ["email.message_link_click", "delivered"],
    ]);
  });

  it("a click's delivery and its job are stored together: when the job cannot be, no delivery is left behind that would never be sent", async () => {
    let jobsFail = false;
    const storage = withCollectionMethod(memoryStorage(), "insert", (insert, collection) =>
      collection === "reachkit_jobs" ? (document) => (jobsFail ? Promise.reject(new Error("disk full")) : insert(document)) : insert,
    );
    t = await startWebhookKit({ storage, plugins: clickPlugins() });
    hooks = await Receiver.start(t.signingKey);
    await t.createWebhook(hooks.url, ["sms.message_link_click"]);
    const links = t.kit.plugin("campaigns").links;
    const link = await links.shorten(t.company.companyId, "https://shop.example.com/sale", { source: "message", address: "+19148440001", channel: "sms" });
    jobsFail = true;
    await assert.rejects(links.click(new URL(link).pathname.slice(3)), /disk full/);
    assert.deepEqual(await t.deliveries(), []);
    jobsFail = false;
    assert.equal((await t.request({ url: new URL(link).pathname, token: null })).status, 302);
    await t.scheduler.flush();
    assert.deepEqual((await t.deliveries()).map((delivery) => delivery.status), ["delivered"]);
    assert.equal(hooks.requests.length, 1);
  });
});
