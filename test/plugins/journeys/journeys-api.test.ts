import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { MAX_JOURNEYS_PER_COMPANY } from "../../../plugins/journeys/index.ts";
import type { Json } from "../../support/test-kit.ts";
import { items, startJourneysKit, type JourneysTestKit } from "./support.ts";

const HOUR = 60 * 60_000;
const paths = (body: Json) => body.error.details.map((detail: Json) => detail.path);

describe("/v1/journeys", () => {
  let t: JourneysTestKit;
  beforeEach(async () => {
    t = await startJourneysKit();
  });
  afterEach(() => t.stop());

  it("creates from a template with fields changed, lists, reads, updates, and answers 404 for an unknown id", async () => {
    const created = await t.createJourney({ template: "cart_abandonment", name: "Carts", steps: [{ type: "wait", duration: "PT2H" }, { type: "sms", text: "Back for {productName}?" }] });
    assert.equal(created.name, "Carts");
    assert.equal(created.status, "active");
    assert.deepEqual(created.trigger, { type: "cart_abandonment" });
    assert.deepEqual(created.exitOn, ["purchase"]);
    assert.equal(created.companyId, undefined);
    const list = t.json(await t.request({ url: "/v1/journeys" }));
    assert.deepEqual(list.journeys.map((journey: Json) => journey.id), [created.id]);
    const updated = await t.request({ method: "PUT", url: `/v1/journeys/${created.id}`, body: { window: "P2D" } });
    assert.equal(updated.status, 200);
    assert.equal(t.json(updated).window, "P2D");
    assert.equal(t.json(await t.request({ url: `/v1/journeys/${created.id}` })).window, "P2D");
    assert.equal((await t.request({ url: "/v1/journeys/nope" })).status, 404);
    assert.equal((await t.request({ method: "PUT", url: "/v1/journeys/nope", body: {} })).status, 404);
  });

  it("refuses an invalid definition with a 400 naming each field, and stores nothing", async () => {
    const cases: Array<[Json, string[]]> = [
      [{}, ["name", "trigger", "steps"]],
      [{ name: "x", trigger: { type: "anniversary" }, steps: [{ type: "sms", text: "Hi" }] }, ["trigger.type"]],
      [{ template: "welcome", steps: [{ type: "wait", duration: "PT1H" }] }, ["steps"]],
      [{ template: "welcome", steps: [{ type: "sms", text: "{productName} is back" }] }, ["steps.0.text"]],
      [{ template: "back_in_stock", steps: [{ type: "sms", text: "Hi {nickname}" }] }, ["steps.0.text"]],
      [{ template: "cart_abandonment", steps: [{ type: "wait", duration: "P400D" }, { type: "sms", text: "Hi" }] }, ["steps.0.duration"]],
      [{ template: "cart_abandonment", steps: [{ type: "fax", text: "Hi" }] }, ["steps.0.type"]],
      [{ template: "cart_abandonment", steps: [{ type: "sms", text: "x".repeat(1601) }] }, ["steps.0.text"]],
      [{ template: "cart_abandonment", window: "soon" }, ["window"]],
      [{ template: "cart_abandonment", pacing: { messagesPerUnit: 2, interval: "PT1H" } }, ["pacing"]],
      [{ template: "back_in_stock", pacing: { messagesPerUnit: 0, interval: "PT1H" } }, ["pacing.messagesPerUnit"]],
      [{ template: "welcome", steps: [{ type: "mms", text: "Hi" }] }, ["steps.0.mediaUrl"]],
      [{ template: "welcome", status: "running" }, ["status"]],
    ];
    for (const [body, expected] of cases) {
      const response = await t.request({ method: "POST", url: "/v1/journeys", body });
      assert.equal(response.status, 400, `${JSON.stringify(body)}: ${response.body}`);
      assert.deepEqual(paths(t.json(response)), expected, JSON.stringify(body));
    }
    assert.deepEqual(t.json(await t.request({ url: "/v1/journeys" })).journeys, []);
  });

  it(`allows at most ${MAX_JOURNEYS_PER_COMPANY} journeys per company (409 beyond)`, async () => {
    for (let n = 0; n < MAX_JOURNEYS_PER_COMPANY; n++) await t.kit.plugin("journeys").create(t.company.companyId, { template: "welcome" });
    const response = await t.request({ method: "POST", url: "/v1/journeys", body: { template: "welcome" } });
    assert.equal(response.status, 409);
  });

  it("pausing stops the pending steps and takes nobody in; resuming takes people in again", async () => {
    const journey = await t.createJourney({ template: "cart_abandonment" });
    await t.subscribe("+19148440001");
    await t.subscribe("+19148440002");
    await t.event("ecommerce/add-to-cart", "+19148440001", items("mug", "mug-blue"));
    assert.equal((await t.request({ method: "POST", url: `/v1/journeys/${journey.id}/pause` })).status, 200);
    await t.event("ecommerce/add-to-cart", "+19148440002", items("mug", "mug-blue"));
    await t.scheduler.advance(2 * HOUR);
    assert.deepEqual(await t.journeyTexts("+19148440001"), []);
    assert.deepEqual(await t.journeyTexts("+19148440002"), []);
    assert.equal((await t.stats(journey.id)).exited.journey_paused, 1);
    assert.equal(t.json(await t.request({ method: "POST", url: `/v1/journeys/${journey.id}/resume` })).status, "active");
    await t.event("ecommerce/add-to-cart", "+19148440002", items("mug", "mug-blue"));
    await t.scheduler.advance(HOUR);
    assert.equal((await t.journeyTexts("+19148440002")).length, 1);
  });

  it("deleting stops the pending steps: nothing is sent, and the journey is gone", async () => {
    const journey = await t.createJourney({ template: "cart_abandonment" });
    await t.subscribe("+19148440001");
    await t.event("ecommerce/add-to-cart", "+19148440001", items("mug", "mug-blue"));
    assert.equal((await t.request({ method: "DELETE", url: `/v1/journeys/${journey.id}` })).status, 204);
    await t.scheduler.advance(2 * HOUR);
    assert.deepEqual(await t.journeyTexts("+19148440001"), []);
    assert.equal((await t.request({ url: `/v1/journeys/${journey.id}` })).status, 404);
    assert.equal((await t.request({ method: "DELETE", url: `/v1/journeys/${journey.id}` })).status, 404);
  });

  it("a privacy deletion removes the person from every journey: their waiting step sends nothing and leaves no job", async () => {
    await t.createJourney({ template: "cart_abandonment" });
    await t.subscribe("+19148440001");
    await t.subscribe("+19148440002");
    await t.event("ecommerce/add-to-cart", "+19148440001", items("mug", "mug-blue"));
    await t.event("ecommerce/add-to-cart", "+19148440002", items("mug", "mug-blue"));
    const removed = await t.kit.deleteSubjectData({ companyId: t.company.companyId, phone: "+19148440001" });
    assert.ok(removed > 0);
    await t.scheduler.advance(2 * HOUR);
    assert.deepEqual(await t.journeyTexts("+19148440001"), []);
    assert.equal((await t.journeyTexts("+19148440002")).length, 1);
    const left = await t.kit.jobs.list({ companyId: t.company.companyId, type: "journeys.step", status: "queued" });
    assert.deepEqual(left, []);
  });
});
