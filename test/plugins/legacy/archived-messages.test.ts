import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { addSubscriber, OTHER_PHONE, post, postToHosts, PHONE, startLegacyKit } from "./support.ts";

const send = { to: PHONE, body: "Your table is ready.", messageId: "campaign-7" };

describe("POST /v1/messages on the messages host (archived)", () => {
  it("sends to an active subscriber and echoes to, body and messageId (kept in the outbox tags)", async () => {
    const t = await startLegacyKit();
    await addSubscriber(t, PHONE);
    const response = await post(t, "/v1/messages", send);
    assert.equal(response.status, 200);
    assert.deepEqual(t.json(response), send);
    const plain = await post(t, "/v1/messages", { to: "914-844-0001", body: "Second course.", type: "TRANSACTIONAL", mediaUrl: "http://cdn.example/a.jpg" });
    assert.deepEqual(t.json(plain), { to: "914-844-0001", body: "Second course." }, "echoed as given");
    await t.scheduler.flush();
    assert.deepEqual(
      t.sms.sent.map(({ body, mediaUrl }) => [body, mediaUrl]),
      [
        ["Acme: Your table is ready.", undefined],
        ["Acme: Second course.", "http://cdn.example/a.jpg"],
      ],
    );
    const [first] = (await t.kit.outbox.list({ to: PHONE })).filter((m) => m.kind === "transactional");
    assert.deepEqual(first?.tags, { messageId: "campaign-7" });
    await t.stop();
  });

  it("answers 404 for an invalid, unknown or unsubscribed number", async () => {
    const t = await startLegacyKit();
    await addSubscriber(t, PHONE);
    await post(t, "/1/subscribers/unsubscribe", { phone: PHONE, sendOptOutMessage: false });
    for (const to of [PHONE, OTHER_PHONE, "not a number", "+15555555555"]) {
      const response = await post(t, "/v1/messages", { ...send, to });
      assert.equal(response.status, 404, to);
      assert.equal(t.json(response).error.details[0].path, "to");
    }
    await t.scheduler.flush();
    assert.equal(t.sms.sent.length, 0);
    await t.stop();
  });

  it("answers 400 for missing parameters (the reference's 500), a wrong type, a country outside US/CA/UK, a duplicate", async () => {
    const t = await startLegacyKit();
    await addSubscriber(t, PHONE);
    await addSubscriber(t, "+18765551234");
    const cases: Array<[unknown, string]> = [
      [{}, "to"],
      [{ to: PHONE }, "body"],
      [{ body: "hi" }, "to"],
      [{ ...send, type: "transactional" }, "type"],
      [{ ...send, mediaUrl: "ftp://x" }, "mediaUrl"],
      [{ ...send, messageId: 7 }, "messageId"],
      [{ ...send, to: "+18765551234" }, "to"],
    ];
    for (const [body, path] of cases) {
      const response = await post(t, "/v1/messages", body);
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.ok(t.json(response).error.details.some((d: { path: string }) => d.path === path), response.body);
    }
    assert.equal((await post(t, "/v1/messages", send)).status, 200);
    const duplicate = await post(t, "/v1/messages", send);
    assert.equal(duplicate.status, 400);
    assert.equal(t.json(duplicate).error.code, "duplicate_message");
    await t.scheduler.flush();
    assert.equal(t.sms.sent.length, 1);
    await t.stop();
  });

  it("answers 403 for a v1 token or a bad legacy token", async () => {
    const t = await startLegacyKit();
    await addSubscriber(t, PHONE);
    for (const token of [t.company.apiKey, "wrong", null]) assert.equal((await post(t, "/v1/messages", send, token)).status, 403);
    await t.scheduler.flush();
    assert.equal(t.sms.sent.length, 0);
    await t.stop();
  });

  it("belongs to the messages host group: a listener of the main host does not serve it", async () => {
    const t = await startLegacyKit();
    await addSubscriber(t, PHONE);
    const request = (groups: Array<"api" | "messages">) => postToHosts(t, groups, "/v1/messages", send, t.company.legacyToken);
    assert.equal((await request(["api"])).status, 404);
    assert.equal((await request(["messages"])).status, 200);
    await t.stop();
  });
});
