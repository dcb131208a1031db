import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MAX_ATTRIBUTE_VALUE_LENGTH, MAX_ATTRIBUTES_PER_REQUEST, MAX_NAME_LENGTH } from "../../../plugins/profiles/index.ts";
import { EMAIL, PHONE, post, startProfilesKit, storedCounts, tokenWith } from "./support.ts";

const attributes = (properties: Record<string, unknown>, user: Record<string, unknown> = { phone: PHONE }) => ({ properties, user });
const read = (query: string) => ({ url: `/v1/attributes/custom?${query}` });

describe("POST and GET /v1/attributes/custom", () => {
  it("sets attributes (200, empty body) and reads them back by phone or email as [{name, value}], the latest value of each", async () => {
    const t = await startProfilesKit();
    const set = await post(t, "/v1/attributes/custom", attributes({ tier: "gold", visits: 3, vip: false }, { phone: PHONE, email: EMAIL }));
    assert.deepEqual([set.status, set.body], [200, ""]);
    t.clock.advance(1000);
    assert.equal((await post(t, "/v1/attributes/custom", attributes({ visits: 4 }))).status, 200);
    const byEmail = await t.request(read(`email=${encodeURIComponent(EMAIL)}`));
    assert.equal(byEmail.status, 200);
    assert.equal(byEmail.headers["content-type"], "application/json");
    assert.deepEqual(t.json(byEmail), [
      { name: "tier", value: "gold" },
      { name: "vip", value: false },
      { name: "visits", value: 4 },
    ]);
    assert.deepEqual(t.json(await t.request(read(`phone=${encodeURIComponent(PHONE)}`))), t.json(byEmail));
    assert.deepEqual(t.json(await t.request(read("phone= 19148440001"))), t.json(byEmail), "a + decoded to a space is a +");
    assert.deepEqual(t.json(await t.request(read("email=nobody@example.com"))), [], "an unknown person has none");
    await t.stop();
  });

  it("fixes each attribute's type with the first value a company sets, refuses lists and objects, and stores nothing of a refused request", async () => {
    const t = await startProfilesKit();
    assert.equal((await post(t, "/v1/attributes/custom", attributes({ visits: 3, tier: "gold" }))).status, 200);
    const before = await storedCounts(t);
    const refused: Array<[Record<string, unknown>, string[]]> = [
      [{ visits: "4" }, ["properties.visits"]],
      [{ tier: true, fresh: "new" }, ["properties.tier"]],
      [{ colours: ["red"] }, ["properties.colours"]],
      [{ address: { city: "Paris" } }, ["properties.address"]],
      [{ unset: null }, ["properties.unset"]],
      [{ ["n".repeat(MAX_NAME_LENGTH + 1)]: 1 }, [`properties.${"n".repeat(MAX_NAME_LENGTH + 1)}`]],
      [{ note: "x".repeat(MAX_ATTRIBUTE_VALUE_LENGTH + 1) }, ["properties.note"]],
      [Object.fromEntries(Array.from({ length: MAX_ATTRIBUTES_PER_REQUEST + 1 }, (_, i) => [`a${i}`, i])), ["properties"]],
    ];
    for (const [properties, fields] of refused) {
      const response = await post(t, "/v1/attributes/custom", attributes(properties));
      assert.equal(response.status, 400, `${JSON.stringify(properties).slice(0, 100)}: ${response.body}`);
      assert.deepEqual(t.json(response).error.details.map((detail: { path: string }) => detail.path), fields);
    }
    const other = await post(t, "/v1/attributes/custom", attributes({ visits: 9 }, { externalIdentifiers: { clientUserId: "unlinked" } }));
    assert.equal(other.status, 400);
    assert.equal(t.json(other).error.details[0].path, "user");
    assert.equal((await post(t, "/v1/attributes/custom", { user: { phone: PHONE } })).status, 400, "properties is required");
    assert.deepEqual(await storedCounts(t), before);
    assert.deepEqual(t.json(await t.request(read(`phone=${encodeURIComponent(PHONE)}`))), [
      { name: "tier", value: "gold" },
      { name: "visits", value: 3 },
    ]);
    // Names up to the limit are fine; another company fixes its own types.
    assert.equal((await post(t, "/v1/attributes/custom", attributes({ ["n".repeat(MAX_NAME_LENGTH)]: 1 }))).status, 200);
    const other2 = await t.kit.provisionCompany({ name: "Other" });
    assert.equal((await post(t, "/v1/attributes/custom", attributes({ visits: "many" }), other2.output.apiKey as string)).status, 200);
    await t.stop();
  });

  it("reads with exactly one of phone and email (400 otherwise), and needs attributes:write", async () => {
    const t = await startProfilesKit();
    for (const query of ["", `phone=${encodeURIComponent(PHONE)}&email=${EMAIL}`, "email=undefined", "phone=123", "email=x", "phone=%2B19148440001&phone=%2B19148440002"]) {
      const response = await t.request(read(query));
      assert.equal(response.status, 400, `${query}: ${response.body}`);
      assert.ok(t.json(response).error.details.length > 0);
    }
    const token = await tokenWith(t, ["events:write", "subscriptions:read"]);
    assert.equal((await t.request({ ...read(`email=${EMAIL}`), token })).status, 403);
    assert.equal((await post(t, "/v1/attributes/custom", attributes({ a: 1 }), token)).status, 403);
    await t.stop();
  });
});
