import assert from "node:assert/strict";
import { join } from "node:path";
import { afterEach, describe, it } from "node:test";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import { CAMPAIGN_SENDER } from "../../../plugins/campaigns/index.ts";
import type { RuledText, SendOutcome } from "../../../plugins/send-rules/index.ts";
import { statementsOf } from "../../support/sqlite-statements.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";
import { startCampaignsKit, type CampaignsTestKit } from "./support.ts";

const phoneOf = (i: number) => `+1914844${String(1000 + i)}`;
const emailOf = (i: number) => `person${i}@example.com`;

/** Opts an email address in to MARKETING email (active at once) and sets its profile's attributes. */
async function emailPerson(t: CampaignsTestKit, email: string, attributes: Record<string, string>): Promise<void> {
  await t.kit.plugin("subscriptions").optInNow(t.company.companyId, { user: { email }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING", singleOptIn: true } as never);
  await t.ok("POST", "/v1/attributes/custom", { user: { email }, properties: attributes });
  await t.scheduler.flush();
}

describe("a campaign's page sent in one batch", () => {
  const kits: CampaignsTestKit[] = [];
  afterEach(async () => {
    for (const kit of kits.splice(0)) await kit.stop();
  });

  /** The SQL statements of one send page of `people` recipients on SQLite, once each has a message in the outbox. */
  async function statementsOfAPage(people: number, channel: "sms" | "email" = "sms"): Promise<number> {
    const storage = sqliteStorage({ filename: join(temporaryDirectory("batch-send"), "reachkit.db") });
    const t = await startCampaignsKit({ storage, sendPageSize: 1000 });
    kits.push(t);
    const addressOf = channel === "sms" ? phoneOf : emailOf;
    for (let i = 0; i < people; i++) {
      if (channel === "sms") await t.person(phoneOf(i), { tier: "gold", firstName: `P${i}` });
      else await emailPerson(t, emailOf(i), { tier: "gold", firstName: `P${i}` });
    }
    const segment = await t.segment({ attribute: { name: "tier", op: "eq", value: "gold" } });
    const text = "Hi {firstName}: {link} and https://shop.example.com/terms";
    const campaign = await t.ok("POST", "/v1/campaigns", { name: "Sale", segmentId: segment, channel, text, link: "https://shop.example.com/sale", ...(channel === "email" ? { subject: "Sale for {firstName}" } : {}) }, 201);
    await t.ok("POST", `/v1/campaigns/${campaign.id}/send`, {});
    const sender = t.kit.resolve(CAMPAIGN_SENDER);
    await sender.readAudience({ campaignId: campaign.id });
    const statements = (await statementsOf(() => sender.send({ campaignId: campaign.id }))).length;
    for (let i = 0; i < people; i++) {
      const messages = (await t.kit.outbox.list({ companyId: t.company.companyId, to: addressOf(i) })).filter((message) => message.kind === "campaign");
      assert.equal(messages.length, 1, `the messages to ${addressOf(i)}`);
      assert.match(messages[0]!.body, new RegExp(`^Hi P${i}: http://\\S+/l/\\S{12} and http://\\S+/l/\\S{12}$`));
      if (channel === "email") assert.equal(messages[0]!.subject, `Sale for P${i}`);
    }
    assert.equal((await t.ok("GET", `/v1/campaigns/${campaign.id}/results`)).sent, people);
    // Stopped now, not after the test: the statements counted are of every connection, and this kit's would count
    // in the next page's (its job runner's, or its last read's commit, run while that page gives the event loop back).
    await kits.splice(kits.indexOf(t), 1)[0]!.stop();
    return statements;
  }

  it("costs the same number of SQL statements for a page of 64 recipients as for a page of 8", async () => {
    const eight = await statementsOfAPage(8);
    const sixtyFour = await statementsOfAPage(64);
    assert.equal(sixtyFour, eight, `a page of 8 ran ${eight} statements, a page of 64 ran ${sixtyFour}`);
  });

  it("costs the same number of SQL statements for a page of 64 emails as for a page of 8", async () => {
    const eight = await statementsOfAPage(8, "email");
    const sixtyFour = await statementsOfAPage(64, "email");
    assert.equal(sixtyFour, eight, `a page of 8 emails ran ${eight} statements, a page of 64 ran ${sixtyFour}`);
  });
});

describe("send rules: many texts at once", () => {
  const kits: CampaignsTestKit[] = [];
  afterEach(async () => {
    for (const kit of kits.splice(0)) await kit.stop();
  });

  /** A kit with a cap of 2 a day, where +…1001 has had one marketing text today and +…1004 has no consent. */
  async function rulesKit(): Promise<CampaignsTestKit> {
    const t = await startCampaignsKit({ sendRules: { dailyCap: 2 } });
    kits.push(t);
    for (const i of [1, 2, 3]) await t.person(phoneOf(i));
    const earlier = await t.kit.plugin("sendRules").send({ companyId: t.company.companyId, to: phoneOf(1), messageType: "MARKETING", body: "Earlier", kind: "campaign", idempotencyKey: "earlier" });
    assert.equal(earlier.status, "sent");
    return t;
  }

  /** Texts for every rule: consent missing, quiet hours (02:00 in Tokyo at noon in New York), the cap reached within the list, a key repeated, a key sent before. */
  const texts = (companyId: string): RuledText[] => {
    const text = (i: number, key: string, extra: Partial<RuledText> = {}): RuledText => ({ companyId, to: phoneOf(i), messageType: "MARKETING", body: `Offer ${key}`, kind: "campaign", idempotencyKey: key, ...extra });
    return [
      text(4, "no-consent"),
      text(2, "tokyo", { attributes: { timeZone: "Asia/Tokyo" } }),
      text(1, "second-today"),
      text(1, "third-today"),
      text(3, "repeated"),
      text(3, "repeated"),
      text(1, "earlier"),
      text(2, "transactional-without-consent", { messageType: "TRANSACTIONAL" }),
    ];
  };

  /** An outcome without what differs between two kits (ids, times). */
  const comparable = (outcome: SendOutcome) => (outcome.status === "sent" ? { status: "sent", to: outcome.message.to, body: outcome.message.body, key: outcome.message.idempotencyKey } : outcome);

  it("gives each text the outcome it has sent one after the other, and stores the same texts", async () => {
    const oneByOne = await rulesKit();
    const expected: SendOutcome[] = [];
    for (const text of texts(oneByOne.company.companyId)) expected.push(await oneByOne.kit.plugin("sendRules").send(text));
    const batched = await rulesKit();
    const outcomes = await batched.kit.plugin("sendRules").sendMany(texts(batched.company.companyId));

    assert.deepEqual(outcomes.map(comparable), expected.map(comparable));
    assert.deepEqual(
      expected.map((outcome) => outcome.status === "sent" ? "sent" : `${outcome.status}: ${outcome.reason}`),
      ["skipped: no_consent", "deferred: quiet_hours", "sent", "skipped: frequency_cap", "sent", "sent", "sent", "skipped: no_consent"],
    );
    const [, , , , repeated, again] = outcomes;
    assert.equal(repeated!.status === "sent" && again!.status === "sent" && repeated.message.id === again.message.id, true, "a key given twice is one message");
    const stored = async (t: CampaignsTestKit) => (await t.kit.outbox.list({ companyId: t.company.companyId })).map((message) => `${message.to} ${message.body} ${message.status}`).sort();
    assert.deepEqual(await stored(batched), await stored(oneByOne));
    // No job row per text: the one drain of the company's sender sends them all.
    assert.equal((await batched.kit.jobs.list({ type: "reachkit.outbox.send" })).length, 0, "no job per text");
    const drains = await batched.kit.jobs.list({ type: "reachkit.outbox.drain" });
    const [sender] = (await batched.kit.outbox.list({ companyId: batched.company.companyId })).map((message) => message.from);
    assert.deepEqual(drains.filter((drain) => drain.status === "queued").map((drain) => drain.payload), [{ channel: "sms", from: sender }], "one live drain for the sender's texts");
  });
});
