import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { startTestKit } from "../support/test-kit.ts";

const TO = "+15555550100";
const OTHER = "+15555550101";

describe("the outbox's sendMany", () => {
  it("stores texts in order, once per idempotency key (already taken, or repeated in the list), and sends each once", async () => {
    const t = await startTestKit();
    const companyId = t.company.companyId;
    const earlier = await t.kit.outbox.send({ companyId, to: TO, body: "earlier", kind: "test", idempotencyKey: "k0" });
    const stored = await t.kit.outbox.sendMany([
      { companyId, to: TO, body: "again", kind: "test", idempotencyKey: "k0" },
      { companyId, to: TO, body: "first", kind: "test", idempotencyKey: "k1" },
      { companyId, to: OTHER, body: "second", kind: "test", idempotencyKey: "k2" },
      { companyId, to: OTHER, body: "second again", kind: "test", idempotencyKey: "k2" },
    ]);
    assert.deepEqual(stored.map((message) => message.body), ["earlier", "first", "second", "second"]);
    assert.equal(stored[0]!.id, earlier.id);
    assert.equal(stored[3]!.id, stored[2]!.id);
    await t.scheduler.flush();
    assert.deepEqual(t.sms.sent.map((text) => `${text.to} ${text.body}`).sort(), [`${TO} earlier`, `${TO} first`, `${OTHER} second`]);
    await t.stop();
  });

  it("keeps a duplicate window: the same body to the same number twice in one list is suppressed the second time", async () => {
    const t = await startTestKit();
    const companyId = t.company.companyId;
    const stored = await t.kit.outbox.sendMany([
      { companyId, to: TO, body: "Your code is 1234", kind: "test", suppressDuplicates: true },
      { companyId, to: TO, body: "Your code is 1234", kind: "test", suppressDuplicates: true },
      { companyId, to: OTHER, body: "Your code is 1234", kind: "test", suppressDuplicates: true },
    ]);
    assert.deepEqual(stored.map((message) => message.status), ["queued", "suppressed", "queued"]);
    await t.scheduler.flush();
    assert.equal(t.sms.sent.length, 2);
    await t.stop();
  });

  it("refuses texts of two companies in one list, storing none", async () => {
    const t = await startTestKit();
    const other = (await t.kit.provisionCompany({ name: "Other" })).company.id;
    await assert.rejects(
      t.kit.outbox.sendMany([
        { companyId: t.company.companyId, to: TO, body: "one", kind: "test" },
        { companyId: other, to: TO, body: "two", kind: "test" },
      ]),
      TypeError,
    );
    assert.deepEqual(await t.kit.outbox.list(), []);
    await t.stop();
  });
});

describe("the outbox's sendEmailMany", () => {
  it("stores emails in order, once per idempotency key, from the company's name, and sends each once", async () => {
    const t = await startTestKit();
    const companyId = t.company.companyId;
    const email = (to: string, subject: string, idempotencyKey: string) => ({ companyId, to, subject, text: `${subject}!`, kind: "test", idempotencyKey });
    const earlier = await t.kit.outbox.sendEmail(email("ada@example.com", "earlier", "k0"));
    const stored = await t.kit.outbox.sendEmailMany([email("ada@example.com", "again", "k0"), email("ada@example.com", "first", "k1"), email("bo@example.com", "second", "k2"), email("bo@example.com", "second again", "k2")]);
    assert.deepEqual(stored.map((message) => message.subject), ["earlier", "first", "second", "second"]);
    assert.equal(stored[0]!.id, earlier.id);
    assert.equal(stored[3]!.id, stored[2]!.id);
    assert.deepEqual(stored.map((message) => message.from), Array(4).fill(earlier.from));
    await t.scheduler.flush();
    assert.deepEqual(t.email.sent.map((sent) => `${sent.to} ${sent.subject}`).sort(), ["ada@example.com earlier", "ada@example.com first", "bo@example.com second"]);
    await t.stop();
  });

  it("refuses emails of two companies in one list, storing none", async () => {
    const t = await startTestKit();
    const other = (await t.kit.provisionCompany({ name: "Other" })).company.id;
    await assert.rejects(
      t.kit.outbox.sendEmailMany([
        { companyId: t.company.companyId, to: "ada@example.com", subject: "one", text: "one", kind: "test" },
        { companyId: other, to: "bo@example.com", subject: "two", text: "two", kind: "test" },
      ]),
      /sendEmailMany takes the messages of one company/,
    );
    assert.deepEqual(await t.kit.outbox.list(), []);
    await t.stop();
  });

  it("refuses a list with a header an email may not set, storing none", async () => {
    const t = await startTestKit();
    const companyId = t.company.companyId;
    await assert.rejects(
      t.kit.outbox.sendEmailMany([
        { companyId, to: "ada@example.com", subject: "one", text: "one", kind: "test" },
        { companyId, to: "bo@example.com", subject: "two", text: "two", kind: "test", headers: { From: "someone@else.example" } },
      ]),
      TypeError,
    );
    assert.deepEqual(await t.kit.outbox.list(), []);
    await t.stop();
  });
});
