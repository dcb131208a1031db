import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { EMAIL_LINKS, type SubscriptionEvent } from "../../../plugins/subscriptions/index.ts";
import { startTestKit, type TestKit } from "../../support/test-kit.ts";
import { EMAIL, eligibilityRows, optIn, PHONE } from "./support.ts";

const WEEK = 7 * 24 * 3_600_000;

/** Turns on the double opt-in of the company's MARKETING en-US sign-up unit. */
async function doubleOptIn(t: TestKit, companyId = t.company.companyId): Promise<void> {
  const service = t.kit.plugin("subscriptions");
  const [unit] = (await service.signUpUnits.list(companyId)).filter((u) => u.type === "MARKETING");
  assert.ok(await service.signUpUnits.setEmailDoubleOptIn(companyId, unit!.id, true));
}

/** The path and query of the confirmation link in the latest email to an address. */
function confirmationLink(t: TestKit, to = EMAIL): string {
  const email = t.email.sentTo(to).at(-1);
  assert.ok(email, `no email to ${to}`);
  const url = new URL(/https?:\/\/\S+/.exec(email.text)![0]);
  return `${url.pathname}${url.search}`;
}

describe("email double opt-in (per sign-up unit)", () => {
  it("is off by default: an email opt-in is active at once and no email is sent", async () => {
    const t = await startTestKit();
    assert.equal((await optIn(t, { user: { email: EMAIL } })).status, 202);
    await t.scheduler.flush();
    assert.deepEqual(await eligibilityRows(t, `email=${EMAIL}`), [["MARKETING", "EMAIL", true]]);
    assert.equal(t.email.sent.length, 0);
    await t.stop();
  });

  it("keeps an email opt-in pending until the link of its confirmation email is opened", async () => {
    const t = await startTestKit();
    await doubleOptIn(t);
    const confirmed: SubscriptionEvent[] = [];
    t.kit.events.on("subscription.confirmed", (event) => void confirmed.push(event));
    assert.equal((await optIn(t, { user: { email: EMAIL } })).status, 202);
    await t.scheduler.flush();
    assert.deepEqual(await eligibilityRows(t, `email=${EMAIL}`), [["MARKETING", "EMAIL", false]]);
    const [email] = t.email.sent;
    assert.equal(email!.subject, "Confirm your subscription to Acme");
    assert.match(email!.from, /^"Acme" </);
    assert.match(email!.html ?? "", /<a href="http:\/\/localhost:3000\/email\/confirm\?token=/);

    const opened = await t.request({ url: confirmationLink(t), token: null });
    assert.equal(opened.status, 200);
    assert.match(opened.headers["content-type"] ?? "", /text\/html/);
    assert.match(opened.body, /Subscription confirmed/);
    assert.deepEqual(await eligibilityRows(t, `email=${EMAIL}`), [["MARKETING", "EMAIL", true]]);
    assert.deepEqual(
      confirmed.map((event) => [event.channel, event.address, event.state]),
      [["EMAIL", EMAIL, "active"]],
    );
    const again = await t.request({ url: confirmationLink(t), token: null });
    assert.equal(again.status, 200);
    assert.match(again.body, /Already confirmed/);
    assert.equal(confirmed.length, 1);
    const changes = await t.kit.plugin("subscriptions").changes(t.company.companyId, { email: EMAIL });
    assert.deepEqual(
      changes.map((change) => [change.action, change.source]),
      [
        ["opt_in", "api"],
        ["confirmed", "email_link"],
      ],
    );
    await t.stop();
  });

  it("leaves the text of the same opt-in to its Y reply, and sends the confirmation again on a repeated opt-in", async () => {
    const t = await startTestKit();
    await doubleOptIn(t);
    await optIn(t, { user: { phone: PHONE, email: EMAIL } });
    await optIn(t, { user: { email: EMAIL } });
    await t.scheduler.flush();
    assert.equal(t.email.sentTo(EMAIL).length, 2);
    assert.equal((await t.request({ url: confirmationLink(t), token: null })).status, 200);
    assert.deepEqual(await eligibilityRows(t, `phone=${encodeURIComponent(PHONE)}&email=${EMAIL}`), [
      ["MARKETING", "TEXT", false],
      ["MARKETING", "EMAIL", true],
    ]);
    await t.stop();
  });

  it("is skipped by singleOptIn", async () => {
    const t = await startTestKit();
    await doubleOptIn(t);
    await optIn(t, { user: { email: EMAIL }, singleOptIn: true });
    await t.scheduler.flush();
    assert.deepEqual(await eligibilityRows(t, `email=${EMAIL}`), [["MARKETING", "EMAIL", true]]);
    assert.equal(t.email.sent.length, 0);
    await t.stop();
  });

  it("answers a link altered, cut or made for unsubscribing with a 400 page, an expired one with 410, and confirms nothing", async () => {
    const t = await startTestKit();
    await doubleOptIn(t);
    await optIn(t, { user: { email: EMAIL } });
    await t.scheduler.flush();
    const link = confirmationLink(t);
    const token = new URL(link, "http://kit").searchParams.get("token")!;
    const [payload, signature] = token.split(".") as [string, string];
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString());
    const otherCompany = Buffer.from(JSON.stringify({ ...claims, c: "another-company" })).toString("base64url");
    const unsubscribeToken = new URL(t.kit.resolve(EMAIL_LINKS).unsubscribeUrl(t.company.companyId, EMAIL, "MARKETING")).searchParams.get("token")!;
    const bad = [
      unsubscribeToken,
      `${payload}.${signature.slice(0, -1)}${signature.endsWith("a") ? "b" : "a"}`,
      `${otherCompany}.${signature}`,
      payload,
      `${payload.slice(0, -4)}.${signature}`,
      "",
    ];
    for (const value of bad) {
      const response = await t.request({ url: `/email/confirm?token=${encodeURIComponent(value)}`, token: null });
      assert.equal(response.status, 400, value);
      assert.match(response.body, /This link is not valid/);
    }
    assert.equal((await t.request({ url: "/email/confirm", token: null })).status, 400);
    t.clock.advance(WEEK);
    const expired = await t.request({ url: link, token: null });
    assert.equal(expired.status, 410);
    assert.match(expired.body, /This link has expired/);
    assert.deepEqual(await eligibilityRows(t, `email=${EMAIL}`), [["MARKETING", "EMAIL", false]]);
    await t.stop();
  });

  it("confirms only the company the link was made for", async () => {
    const t = await startTestKit();
    const other = await t.kit.provisionCompany({ name: "Other" });
    const otherId = other.company.id;
    await doubleOptIn(t);
    await doubleOptIn(t, otherId);
    await optIn(t, { user: { email: EMAIL } });
    const otherUnit = (other.output.signUpSources as Array<{ id: string; type: string }>).find((unit) => unit.type === "MARKETING")!;
    await t.kit.plugin("subscriptions").optIn(otherId, { signUpSourceId: otherUnit.id, user: { email: EMAIL } });
    await t.scheduler.flush();
    const acmeEmail = t.email.sent.find((email) => /Acme/.test(email.subject));
    const url = new URL(/https?:\/\/\S+/.exec(acmeEmail!.text)![0]);
    assert.equal((await t.request({ url: `${url.pathname}${url.search}`, token: null })).status, 200);
    const service = t.kit.plugin("subscriptions");
    assert.equal((await service.isEligible(t.company.companyId, { email: EMAIL }, { type: "MARKETING", channel: "EMAIL" })).isEligible, true);
    assert.equal((await service.isEligible(otherId, { email: EMAIL }, { type: "MARKETING", channel: "EMAIL" })).isEligible, false);
    await t.stop();
  });
});
