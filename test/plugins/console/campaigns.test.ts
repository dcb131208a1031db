import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { companyApi, signedInConsole, type SignedInConsole } from "./requests.ts";
import { pageText as text } from "./support.ts";

describe("console campaigns and segments", () => {
  let c: SignedInConsole;
  let companyId: string;
  const api = (method: string, url: string, body?: unknown) => companyApi(c.t.kit, c.t.company.apiKey)(method, url, body);

  before(async () => {
    c = await signedInConsole();
    companyId = c.f.world.companyId;
  });
  after(() => c.t.stop());

  it("shows a sent A/B campaign's results per variant: sent, delivered, failed, clicks, unique clickers, opt-outs, purchases and revenue", async () => {
    const kit = c.t.kit;
    const subscribed = await api("POST", "/v1/segments", { name: "Text subscribers", rule: { consent: { channel: "TEXT", type: "MARKETING", state: "active" } } });
    const campaign = await api("POST", "/v1/campaigns", {
      name: "Spring sale",
      segmentId: subscribed.id,
      channel: "sms",
      link: "https://shop.example/sale",
      variants: [{ name: "Short", text: "Sale today {link}" }, { name: "Long", text: "Our spring sale starts today at {companyName}: {link}" }],
    });
    await api("POST", `/v1/campaigns/${campaign.id}/send`, {});
    for (let round = 0; round < 3; round++) await c.t.scheduler.flush();
    const [ada, grace, alan] = c.f.world.phones;
    const textTo = (phone: string | undefined) => c.t.sms.sent.find((sent) => sent.to === phone && /sale/i.test(sent.body))!;
    // Ada got the short text (one variant each, by weight): delivered, her link clicked twice, then a purchase.
    await c.t.sms.reportStatus(textTo(ada).providerMessageId, "delivered");
    const code = /\/l\/([^\s/?#]+)/.exec(textTo(ada).body)![1]!;
    for (let click = 0; click < 2; click++) assert.equal(await kit.plugin("campaigns").links.click(code), "https://shop.example/sale");
    await api("POST", "/v1/events/ecommerce/purchase", { user: { phone: ada }, items: [{ productId: "tee", productVariantId: "tee-s", name: "Tee", price: [{ value: 40, currency: "USD" }] }] });
    // Grace's text was not delivered, and she opted out; Alan's was delivered.
    await c.t.sms.reportStatus(textTo(grace).providerMessageId, "undelivered", "30005");
    await api("POST", "/v1/subscriptions/unsubscribe", { user: { phone: grace } });
    await c.t.sms.reportStatus(textTo(alan).providerMessageId, "delivered");
    await c.t.scheduler.flush();
    const shown = text(await c.viewer.get(`/console/campaigns/${campaign.id}`));
    assert.match(shown, /Status sent Channel sms Segment Text subscribers Sends sent 2026-03-01 17:00 UTC Link https:\/\/shop\.example\/sale /);
    assert.match(shown, /Variant Weight Text Short 1 Sale today \{link\} Long 1 Our spring sale starts today at \{companyName\}: \{link\} /);
    // Each person gets one variant (by weight): the figures follow whose variant it was.
    const variantOf = (phone: string | undefined) => (textTo(phone).body.startsWith("Sale today") ? "Short" : "Long");
    const column = (name: string) => {
      const has = (phone: string | undefined) => (variantOf(phone) === name ? 1 : 0);
      const audience = has(ada) + has(grace) + has(alan);
      return [audience, audience, 0, 0, has(ada) + has(alan), has(grace), 2 * has(ada), has(ada), has(grace), has(ada), has(ada) ? "40.00 USD" : "none"];
    };
    const [short, long] = [column("Short"), column("Long")];
    const all = [3, 3, 0, 0, 2, 1, 2, 1, 1, 1, "40.00 USD"];
    const measures = ["Audience", "Sent", "To send", "Skipped", "Delivered", "Failed", "Clicks", "Unique clickers", "Opt-outs (24 h)", "Purchases (7 days)", "Revenue"];
    const expected = measures.map((measure, at) => `${measure} ${short[at]} ${long[at]} ${all[at]}`).join(" ");
    assert.ok(shown.includes(`Variant Short Variant Long All variants ${expected} `), `${expected}\n${shown}`);
    assert.ok(!shown.includes("Cancel the campaign"), "a sent campaign is not cancelled");
    const list = text(await c.viewer.get("/console/campaigns"));
    assert.match(list, /Campaign Channel Status Sends Segment \(audience\) Variants Created Spring sale sms sent sent 2026-03-01 17:00 UTC Text subscribers 2 /);
    assert.ok(!list.includes("Create a draft"), "a viewer has no form");
  });

  it("creates a draft with the API's checks, each refusal naming its field", async () => {
    const segmentId = await c.f.segment();
    for (const [fields, path] of [
      [{ name: "Mail", segmentId, channel: "email", text: "Hello" }, "subject"],
      [{ name: "Odd", segmentId, channel: "sms", text: "Hi {nickname}" }, "text"],
      [{ name: "Lost", segmentId: "nope", channel: "sms", text: "Hi" }, "segmentId"],
      [{ name: "Linkless", segmentId, channel: "sms", text: "See {link}" }, "link"],
      [{ name: "", segmentId, channel: "sms", text: "Hi" }, "name"],
    ] as const) {
      const refused = await c.owner.act("/console/campaigns", fields);
      assert.equal(refused.status, 400, path);
      assert.ok(text(refused).includes(`${path} : `), `${path}: ${text(refused).slice(-300)}`);
    }
    const created = await c.owner.act("/console/campaigns", { name: "Newsletter", segmentId, channel: "email", text: "News", subject: "March news", link: "" });
    assert.equal(created.status, 303);
    const campaign = (await c.t.kit.plugin("campaigns").list(companyId)).find((one) => one.name === "Newsletter")!;
    assert.deepEqual([campaign.status, campaign.channel, campaign.variants], ["draft", "email", [{ name: "A", text: "News", subject: "March news", weight: 1 }]]);
    assert.equal(created.headers.location, `/console/campaigns/${campaign.id}?done=created`);
  });

  it("lists campaigns newest first, 50 a page on the server", async () => {
    const segmentId = await c.f.segment();
    for (let n = 0; n < 50; n++) await api("POST", "/v1/campaigns", { name: `Bulk ${n}`, segmentId, channel: "sms", text: "Hi" });
    const all = await c.t.kit.plugin("campaigns").list(companyId);
    const first = await c.viewer.get("/console/campaigns");
    const rows = (body: string) => (body.match(/<tr><td><a href="\/console\/campaigns\//g) ?? []).length;
    assert.equal(rows(first.body), 50);
    assert.ok(first.body.includes("Bulk 49") && !first.body.includes(all[0]!.id), "the newest first");
    const next = /href="([^"]+)" rel="next"/.exec(first.body)![1]!.replace(/&amp;/g, "&");
    const second = await c.viewer.get(next);
    assert.equal(rows(second.body), all.length - 50);
    assert.ok(second.body.includes(all[0]!.id));
  });

  it("lists the segments and counts a segment's people now, with the first of them", async () => {
    const segmentId = await c.f.segment();
    assert.match(text(await c.viewer.get("/console/segments")), /Segment Rule Changed .*Gold members \{"attribute":\{"name":"tier","op":"eq","value":"gold"\}\}/);
    const page = await c.viewer.get(`/console/segments/${segmentId}`);
    assert.match(text(page), /Gold members People now 1 of 4 profiles read /);
    assert.ok(page.body.includes(`>${c.f.world.phones[0]}</a>`), "Ada, the gold member, with a link to her page");
    assert.equal((await c.viewer.get("/console/segments/nope")).status, 404);
  });
  it("cancels a scheduled campaign for an owner; a viewer is refused, and a cancelled one is not cancelled again", async () => {
    const id = await c.f.campaign();
    const scheduled = await c.owner.act(`/console/campaigns/${id}/send`, { sendAt: "2026-03-02T15:00:00Z" });
    assert.equal(scheduled.headers.location, `/console/campaigns/${id}?done=sent`);
    assert.match(text(await c.owner.get(scheduled.headers.location!)), /The campaign is scheduled.*Status scheduled .*Sends 2026-03-02 15:00 UTC .*Cancel the campaign/);
    assert.equal((await c.viewer.act(`/console/campaigns/${id}/cancel`)).status, 403);
    assert.equal((await c.t.kit.plugin("campaigns").get(companyId, id))?.status, "scheduled");
    const cancelled = await c.owner.act(`/console/campaigns/${id}/cancel`);
    assert.equal(cancelled.headers.location, `/console/campaigns/${id}?done=cancelled`);
    assert.equal((await c.t.kit.plugin("campaigns").get(companyId, id))?.status, "cancelled");
    const again = await c.owner.act(`/console/campaigns/${id}/cancel`);
    assert.equal(again.status, 409);
    const late = await c.owner.act(`/console/campaigns/${await c.f.campaign()}/send`, { sendAt: "tomorrow" });
    assert.equal(late.status, 400);
    assert.match(text(late), /sendAt : must be an ISO 8601 instant/);
    // Its time comes (the last test: the sessions end with the day): nothing of it is sent.
    await c.t.scheduler.advance(24 * 3_600_000);
    assert.equal(c.t.sms.sent.filter((sent) => sent.body.startsWith("Sale at")).length, 0);
  });

});
