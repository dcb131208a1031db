import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TestKit } from "../../support/test-kit.ts";
import { addSubscriber, OTHER_PHONE, post, PHONE, startLegacyKit, textsTo } from "./support.ts";

const message = (fields: Record<string, unknown> = {}) => ({ to: PHONE, body: "Your order #1001 has shipped.", type: "TRANSACTIONAL", ...fields });

/** The request was refused with this status and field, and nothing was stored in the outbox or sent. */
async function refusedAndNothingSent(t: TestKit, body: unknown, status: number, path?: string, token?: string | null): Promise<void> {
  const before = (await t.kit.outbox.list()).length;
  const response = await post(t, "/1/messages", body, token);
  assert.equal(response.status, status, `${JSON.stringify(body).slice(0, 80)}: ${response.body}`);
  if (path !== undefined) assert.ok(t.json(response).error.details.some((d: { path: string }) => d.path === path), response.body);
  assert.equal((await t.kit.outbox.list()).length, before, "nothing stored");
  await t.scheduler.flush();
  assert.equal(t.sms.sent.length, 0, "nothing sent");
}

describe("POST /1/messages", () => {
  it("sends to an active subscriber with the company prefix; `to` is sanitised, `link` appended, `mediaUrl` makes an MMS", async () => {
    const t = await startLegacyKit();
    await addSubscriber(t, PHONE);
    const response = await post(t, "/1/messages", message({ to: "(914) 844-0001", link: "https://acme.example/t/1001", mediaUrl: "https://cdn.acme.example/box.png" }));
    assert.equal(response.status, 200);
    const answer = t.json(response);
    assert.deepEqual(
      { to: answer.to, body: answer.body, mediaUrl: answer.mediaUrl, status: answer.status },
      { to: PHONE, body: "Acme: Your order #1001 has shipped. https://acme.example/t/1001", mediaUrl: "https://cdn.acme.example/box.png", status: "queued" },
    );
    await t.scheduler.flush();
    assert.deepEqual(
      t.sms.sent.map(({ to, body, mediaUrl }) => ({ to, body, mediaUrl })),
      [{ to: PHONE, body: "Acme: Your order #1001 has shipped. https://acme.example/t/1001", mediaUrl: "https://cdn.acme.example/box.png" }],
    );
    const stored = await t.kit.outbox.get(answer.id);
    assert.equal(stored?.kind, "transactional");
    assert.equal(stored?.status, "sent");
    await t.stop();
  });

  it("sends from the company's sender number, its name in the prefix as read for the same message", async () => {
    const t = await startLegacyKit();
    await addSubscriber(t, PHONE);
    await t.kit.plugin("accounts").updateCompany(t.company.companyId, { name: "Acme Outlet", senderNumber: "+15551230000" });
    assert.equal((await post(t, "/1/messages", message())).status, 200);
    await t.scheduler.flush();
    assert.deepEqual(t.sms.sent.map(({ from, body }) => ({ from, body })), [{ from: "+15551230000", body: "Acme Outlet: Your order #1001 has shipped." }]);
    await t.stop();
  });

  it("sends to US, Canadian and UK numbers (Crown dependencies and US territories included)", async () => {
    const t = await startLegacyKit();
    const phones = ["+15145550123", "+447400123456", "+447911123456", "+17875550123"];
    for (const phone of phones) await addSubscriber(t, phone);
    for (const phone of phones) assert.equal((await post(t, "/1/messages", message({ to: phone }))).status, 200, phone);
    await t.scheduler.flush();
    assert.deepEqual(t.sms.sent.map((sent) => sent.to), phones);
    await t.stop();
  });

  it("does not deliver the same body to the same number again within five minutes: 400, recorded as suppressed", async () => {
    const t = await startLegacyKit();
    await addSubscriber(t, PHONE);
    assert.equal((await post(t, "/1/messages", message())).status, 200);
    await t.clock.advance(4 * 60_000 + 59_000);
    const duplicate = await post(t, "/1/messages", message());
    assert.equal(duplicate.status, 400);
    assert.equal(t.json(duplicate).error.code, "duplicate_message");
    assert.equal((await post(t, "/1/messages", message({ body: "Your order #1002 has shipped." }))).status, 200, "another body goes");
    await t.scheduler.flush();
    assert.deepEqual(textsTo(t, PHONE), ["Acme: Your order #1001 has shipped.", "Acme: Your order #1002 has shipped."]);
    assert.deepEqual(
      (await t.kit.outbox.list({ to: PHONE })).filter((m) => m.kind === "transactional").map((m) => m.status),
      ["sent", "suppressed", "sent"],
    );
    await t.scheduler.advance(2_000); // the first one is now more than five minutes old
    assert.equal((await post(t, "/1/messages", message())).status, 200);
    await t.scheduler.flush();
    assert.equal(textsTo(t, PHONE).length, 3);
    await t.stop();
  });

  it("uses the company's own prefix, which may name the subscriber", async () => {
    const t = await startLegacyKit();
    await addSubscriber(t, PHONE, { first_name: "Ada" });
    await addSubscriber(t, OTHER_PHONE);
    await t.kit.plugin("legacy").prefixes.set(t.company.companyId, "{company}: Hi {firstName}, ");
    await post(t, "/1/messages", message({ body: "your order has shipped." }));
    await post(t, "/1/messages", message({ to: OTHER_PHONE, body: "your order has shipped." }));
    await t.scheduler.flush();
    assert.deepEqual(textsTo(t, PHONE), ["Acme: Hi Ada, your order has shipped."]);
    assert.deepEqual(textsTo(t, OTHER_PHONE), ["Acme: Hi, your order has shipped."]);
    await t.stop();
  });

  it("refuses numbers outside the US, Canada and the UK, found from the number (France, Jamaica): 400, nothing sent", async () => {
    const t = await startLegacyKit();
    for (const phone of ["+33612345678", "+18765551234"]) {
      await addSubscriber(t, phone);
      await refusedAndNothingSent(t, message({ to: phone }), 400, "to");
    }
    const jamaica = await post(t, "/1/messages", message({ to: "+18765551234" }));
    assert.equal(t.json(jamaica).error.code, "unsupported_country");
    assert.match(t.json(jamaica).error.message, /JM/);
    await t.stop();
  });

  it("sends only to active, opted-in subscribers of the token's company: 400 otherwise, with the reason", async () => {
    const t = await startLegacyKit();
    await refusedAndNothingSent(t, message(), 400, "to");
    await addSubscriber(t, PHONE);
    await post(t, "/1/subscribers/unsubscribe", { phone: PHONE, sendOptOutMessage: false });
    await refusedAndNothingSent(t, message(), 400, "to");
    // A double opt-in still waiting for its "Y".
    await t.request({ method: "POST", url: "/v1/subscriptions", body: { user: { phone: OTHER_PHONE }, locale: "en-US", subscriptionType: "TRANSACTIONAL" } });
    await t.scheduler.flush();
    t.sms.clear();
    await refusedAndNothingSent(t, message({ to: OTHER_PHONE }), 400, "to");
    const other = await t.kit.provisionCompany({ name: "Other" });
    await refusedAndNothingSent(t, message({ to: OTHER_PHONE }), 400, "to", other.output.legacyToken as string);
    const refused = await post(t, "/1/messages", message());
    assert.equal(t.json(refused).error.code, "not_subscribed");
    await t.stop();
  });

  it("answers 400 for bad input: type in another case, a 10 KB body, an ftp mediaUrl, missing or mistyped fields, a text too long with its prefix", async () => {
    const t = await startLegacyKit();
    await addSubscriber(t, PHONE);
    await refusedAndNothingSent(t, message({ type: "transactional" }), 400, "type");
    await refusedAndNothingSent(t, message({ type: "MARKETING" }), 400, "type");
    await refusedAndNothingSent(t, { to: PHONE, body: "hi" }, 400, "type");
    await refusedAndNothingSent(t, message({ body: "x".repeat(10 * 1024) }), 400, "body");
    await refusedAndNothingSent(t, message({ body: "x".repeat(1600) }), 400, "body");
    await refusedAndNothingSent(t, message({ body: "   " }), 400, "body");
    await refusedAndNothingSent(t, message({ mediaUrl: "ftp://x" }), 400, "mediaUrl");
    await refusedAndNothingSent(t, message({ link: "javascript:alert(1)" }), 400, "link");
    await refusedAndNothingSent(t, message({ to: "not a number" }), 400, "to");
    await refusedAndNothingSent(t, message({ to: "+15555555555" }), 400, "to");
    await refusedAndNothingSent(t, message({ to: 19148440001 }), 400, "to");
    await refusedAndNothingSent(t, {}, 400, "body");
    assert.equal((await post(t, "/1/messages", message({ body: "x".repeat(1594) }))).status, 200, "1,594 + the 6 of \"Acme: \" = 1,600");
    await t.stop();
  });

  it("answers 403 for a v1 API key, a missing or an unknown token, and sends nothing", async () => {
    const t = await startLegacyKit();
    await addSubscriber(t, PHONE);
    for (const token of [t.company.apiKey, null, "rk_leg_unknown"]) {
      await refusedAndNothingSent(t, message(), 403, undefined, token);
    }
    await t.stop();
  });
});
