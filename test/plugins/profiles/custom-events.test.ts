import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_EVENT_BODY_LIMIT_BYTES, LATE_EVENT_MS } from "../../../plugins/profiles/index.ts";
import { EMAIL, PHONE, eventsOf, post, startProfilesKit, storedCounts, tokenWith } from "./support.ts";

const custom = (body: Record<string, unknown>) => ({ type: "Order Shipped", user: { phone: PHONE }, ...body });

describe("POST /v1/events/custom", () => {
  it("answers 200 with an empty body and stores the event in the person's timeline, extra fields ignored", async () => {
    const t = await startProfilesKit();
    const response = await post(t, "/v1/events/custom", custom({ properties: { orderId: "1001", items: [{ sku: "m" }], total: 12.5 }, colour: "ignored", user: { phone: PHONE, email: "ADA@example.com", extra: 1 } }));
    assert.equal(response.status, 200);
    assert.equal(response.body, "");
    assert.equal(response.headers["content-type"], undefined);
    const [event] = await eventsOf(t, "email", EMAIL);
    assert.deepEqual(
      { kind: event?.kind, type: event?.type, properties: event?.properties, occurredAt: event?.occurredAt },
      { kind: "custom", type: "Order Shipped", properties: { orderId: "1001", items: [{ sku: "m" }], total: 12.5 }, occurredAt: t.clock.now() },
    );
    assert.equal((await eventsOf(t, "phone", PHONE)).length, 1, "phone and email sent together name one profile");
    await t.stop();
  });

  it("reads occurredAt in RFC 3339 or the reference's +0000 form, and the misspelled occuredAt", async () => {
    const t = await startProfilesKit();
    const sent = [
      { occurredAt: "2026-03-01T11:00:00Z", expected: "2026-03-01T11:00:00.000Z" },
      { occurredAt: "2026-03-01T06:30:00.250-05:00", expected: "2026-03-01T11:30:00.250Z" },
      { occurredAt: "2026-03-01T11:45:00+0000", expected: "2026-03-01T11:45:00.000Z" },
      { occuredAt: "2026-03-01T11:50:00.000+0100", expected: "2026-03-01T10:50:00.000Z" },
    ];
    for (const { expected: _expected, ...time } of sent) assert.equal((await post(t, "/v1/events/custom", custom(time))).status, 200);
    const stored = (await eventsOf(t, "phone", PHONE)).map((event) => new Date(event.occurredAt).toISOString());
    assert.deepEqual(stored.sort(), sent.map((time) => time.expected).sort());
    await t.stop();
  });

  it("answers 400 naming the field for every rule of the reference, and stores nothing", async () => {
    const t = await startProfilesKit();
    await post(t, "/v1/events/custom", custom({ properties: { known: 1 } }));
    const before = await storedCounts(t);
    const refused: Array<[Record<string, unknown>, string]> = [
      [{ type: "Order (shipped)" }, "type"],
      [{ type: "a,b" }, "type"],
      [{ type: "" }, "type"],
      [{ type: "x".repeat(201) }, "type"],
      [{ type: undefined }, "type"],
      [{ properties: { 'say "hi"': 1 } }, 'properties.say "hi"'],
      [{ properties: { "a|b": 1 } }, "properties.a|b"],
      [{ properties: { "": 1 } }, "properties."],
      [{ properties: [1, 2] }, "properties"],
      [{ occurredAt: "2026-03-01 11:00:00" }, "occurredAt"],
      [{ occurredAt: "2026-02-30T11:00:00Z" }, "occurredAt"],
      [{ occurredAt: "2026-03-01T11:00:00" }, "occurredAt"],
      [{ occuredAt: 1772362800000 }, "occuredAt"],
      [{ occurredAt: "2026-03-02T12:00:01Z" }, "occurredAt"],
      [{ externalEventId: 7 }, "externalEventId"],
      [{ user: {} }, "user"],
      [{ user: { phone: "914-844-0001" } }, "user.phone"],
      [{ user: { email: "not an email" } }, "user.email"],
      [{ user: { externalIdentifiers: { customIdentifiers: "x" } } }, "user.externalIdentifiers.customIdentifiers"],
      [{ user: [] }, "user"],
    ];
    for (const [body, field] of refused) {
      const response = await post(t, "/v1/events/custom", custom(body));
      assert.equal(response.status, 400, `${JSON.stringify(body)}: ${response.body}`);
      assert.ok(t.json(response).error.details.some((detail: { path: string }) => detail.path === field), `${JSON.stringify(body)} names ${field}: ${response.body}`);
    }
    assert.deepEqual(await storedCounts(t), before);
    await t.stop();
  });

  it("accepts an external identifier alone once it is linked to a phone or an email, in either customIdentifiers form", async () => {
    const t = await startProfilesKit();
    const alone = { user: { externalIdentifiers: { clientUserId: "u-1" } } };
    const before = await storedCounts(t);
    const unlinked = await post(t, "/v1/events/custom", custom(alone));
    assert.equal(unlinked.status, 400);
    assert.equal(t.json(unlinked).error.details[0].path, "user");
    assert.deepEqual(await storedCounts(t), before, "nothing stored");
    // Two identifiers without a phone or an email are linked, but still name nobody reachable.
    assert.equal((await post(t, "/v1/identity-resolution/user-identifiers", { clientUserId: "u-1", shopifyId: "s-1" })).status, 202);
    assert.equal((await post(t, "/v1/events/custom", custom(alone))).status, 400);
    assert.equal((await post(t, "/v1/identity-resolution/user-identifiers", { clientUserId: "u-1", email: EMAIL })).status, 202);
    assert.equal((await post(t, "/v1/events/custom", custom(alone))).status, 200);
    const map = { user: { externalIdentifiers: { customIdentifiers: { loyaltyId: "L-9" } } } };
    const list = { user: { externalIdentifiers: { customIdentifiers: [{ name: "loyaltyId", value: "L-9" }] } } };
    assert.equal((await post(t, "/v1/events/custom", custom(map))).status, 400);
    assert.equal((await post(t, "/v1/events/custom", custom({ user: { email: EMAIL, ...map.user } }))).status, 200);
    assert.equal((await post(t, "/v1/events/custom", custom(list))).status, 200);
    assert.equal((await eventsOf(t, "email", EMAIL)).length, 3);
    await t.stop();
  });

  it("stores one event for an externalEventId sent twice", async () => {
    const t = await startProfilesKit();
    const body = custom({ externalEventId: "0b6c2a4e-5d1f-4d7a-9f0e-3c1b2a4d5e6f", properties: { n: 1 } });
    assert.equal((await post(t, "/v1/events/custom", body)).status, 200);
    const again = await post(t, "/v1/events/custom", { ...body, properties: { n: 2 } });
    assert.equal(again.status, 200);
    assert.equal(again.body, "");
    const other = await t.kit.provisionCompany({ name: "Other" });
    assert.equal((await post(t, "/v1/events/custom", body, other.output.apiKey as string)).status, 200, "another company's id is its own");
    const events = await eventsOf(t, "phone", PHONE);
    assert.deepEqual(events.map((event) => event.properties), [{ n: 1 }]);
    assert.equal(await t.kit.storage.collection("profiles_events").count(), 2);
    await t.stop();
  });

  it("stores an event that occurred more than 12 hours ago but triggers nothing with it", async () => {
    const t = await startProfilesKit();
    const triggered: string[] = [];
    t.kit.events.on("profile.event.recorded", (event) => void triggered.push(event.type ?? event.kind));
    const at = (ms: number) => new Date(t.clock.now() - ms).toISOString();
    await post(t, "/v1/events/custom", custom({ type: "Fresh", occurredAt: at(LATE_EVENT_MS) }));
    await post(t, "/v1/events/custom", custom({ type: "Late", occurredAt: at(LATE_EVENT_MS + 1) }));
    await post(t, "/v1/events/custom", custom({ type: "Now" }));
    assert.deepEqual(triggered, ["Fresh", "Now"]);
    const stored = await eventsOf(t, "phone", PHONE);
    assert.deepEqual(stored.map((event) => [event.type, event.late ?? false]), [["Now", false], ["Fresh", false], ["Late", true]]);
    await t.stop();
  });

  it("refuses a key beyond the 200 an event type may use at a company, and the 201st key of one event", async () => {
    const t = await startProfilesKit();
    const keys = (from: number, count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${from + i}`, i]));
    const tooMany = await post(t, "/v1/events/custom", custom({ properties: keys(0, 201) }));
    assert.equal(tooMany.status, 400);
    assert.equal(t.json(tooMany).error.details[0].path, "properties");
    assert.equal((await post(t, "/v1/events/custom", custom({ properties: keys(0, 150) }))).status, 200);
    assert.equal((await post(t, "/v1/events/custom", custom({ properties: keys(100, 100) }))).status, 200, "150 known and 50 new: 200 keys");
    const before = await storedCounts(t);
    const beyond = await post(t, "/v1/events/custom", custom({ properties: { k0: 1, k200: 2 } }));
    assert.equal(beyond.status, 400);
    assert.deepEqual(t.json(beyond).error.details.map((detail: { path: string }) => detail.path), ["properties.k200"]);
    assert.deepEqual(await storedCounts(t), before);
    assert.equal((await post(t, "/v1/events/custom", custom({ properties: { k0: 1, k199: 2 } }))).status, 200, "known keys stay usable");
    assert.equal((await post(t, "/v1/events/custom", custom({ type: "Other type", properties: { k200: 1 } }))).status, 200, "the limit is per type");
    await t.stop();
  });

  it(`refuses a body over ${DEFAULT_EVENT_BODY_LIMIT_BYTES} bytes with 413, and takes its own limit`, async () => {
    const t = await startProfilesKit();
    const body = (size: number) => {
      const base = JSON.stringify(custom({ properties: { note: "" } }));
      return custom({ properties: { note: "x".repeat(size - base.length) } });
    };
    assert.equal(JSON.stringify(body(DEFAULT_EVENT_BODY_LIMIT_BYTES)).length, DEFAULT_EVENT_BODY_LIMIT_BYTES);
    assert.equal((await post(t, "/v1/events/custom", body(DEFAULT_EVENT_BODY_LIMIT_BYTES))).status, 200);
    const tooLarge = await post(t, "/v1/events/custom", body(DEFAULT_EVENT_BODY_LIMIT_BYTES + 1));
    assert.equal(tooLarge.status, 413);
    assert.equal(t.json(tooLarge).error.code, "payload_too_large");
    await t.stop();
    const small = await startProfilesKit({ profiles: { eventBodyLimitBytes: 2048 } });
    assert.equal((await post(small, "/v1/events/custom", body(2049))).status, 413);
    assert.equal((await post(small, "/v1/events/custom", body(2048))).status, 200);
    await small.stop();
  });

  it("needs the events:write scope", async () => {
    const t = await startProfilesKit();
    const token = await tokenWith(t, ["ecommerce:write"]);
    const response = await post(t, "/v1/events/custom", custom({}), token);
    assert.equal(response.status, 403);
    assert.match(t.json(response).error.message, /events:write/);
    await t.stop();
  });
});
